package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/ferrymcp/ferry/gateway"
	"github.com/ferrymcp/ferry/gateway/shared"
)

// keysFollowInterval is how often a replica reads the shared sealing keys
// again, so that a rotation reaches it.
const keysFollowInterval = time.Minute

// replicaOptions sets up what replicas of ferry serve share, from
// --redis and --session-keys: nil when neither is given. The keys come
// from the file when one is named, else from Redis (made by the first
// replica to start); the returned function stops following them.
func replicaOptions(ctx context.Context, f *serveFlags, log *slog.Logger) (*gateway.ReplicaOptions, func(), error) {
	if f.redis == "" && f.sessionKeys == "" {
		if f.advertise != "" {
			return nil, nil, usageErrorf("--advertise is for replicas: give --redis or --session-keys too")
		}
		return nil, func() {}, nil
	}
	var store *shared.Store
	if f.redis != "" {
		var err error
		if store, err = shared.Open(ctx, f.redis, &shared.Options{Logger: log}); err != nil {
			return nil, nil, usageErrorf("--redis: %v", err)
		}
	}
	keys, err := sessionKeys(ctx, f.sessionKeys, store)
	if err != nil {
		if store != nil {
			store.Close()
		}
		return nil, nil, err
	}
	sealer, err := gateway.NewSealer(keys...)
	if err != nil {
		return nil, nil, err
	}
	o := &gateway.ReplicaOptions{Sealer: sealer, Advertise: f.advertise}
	if store == nil {
		return o, func() {}, nil
	}
	o.Store, o.Events = store, store
	fctx, cancel := context.WithCancel(context.Background())
	if f.sessionKeys == "" {
		go store.FollowKeys(fctx, sealer, keys, keysFollowInterval)
	}
	log.Info("sharing sessions with the other replicas through Redis")
	return o, func() { cancel(); store.Close() }, nil
}

// sessionKeys reads the sealing keys from file, else from store.
func sessionKeys(ctx context.Context, file string, store *shared.Store) ([][]byte, error) {
	if file == "" {
		return store.Keys(ctx)
	}
	fh, err := os.Open(file)
	if err != nil {
		return nil, usageErrorf("--session-keys: %v", err)
	}
	defer fh.Close()
	keys, err := gateway.ReadKeys(fh)
	if err != nil {
		return nil, usageErrorf("--session-keys %s: %v", file, err)
	}
	return keys, nil
}
