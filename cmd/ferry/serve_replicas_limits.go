package main

import (
	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/limit"
	"github.com/ferrymcp/ferry/gateway/shared"
)

// sharedLimits returns the rate limits' buckets in the Redis the replicas
// share (--redis), nil without one: each replica then counts its own.
func sharedLimits(r *gateway.ReplicaOptions) limit.Store {
	if r == nil {
		return nil
	}
	if st, ok := r.Store.(*shared.Store); ok {
		return st.Limits()
	}
	return nil
}

// sharedSlots returns the counts of calls in flight in the Redis the
// replicas share, nil without one: each replica then counts its own.
func sharedSlots(r *gateway.ReplicaOptions) limit.SlotStore {
	if r == nil {
		return nil
	}
	if st, ok := r.Store.(*shared.Store); ok {
		return st.Slots()
	}
	return nil
}
