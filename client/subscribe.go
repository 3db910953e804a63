package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/internal/jsonrpcapi"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Subscription is a stateless subscriptions/listen stream. Its notifications
// go to the client's OnListChanged and OnResourceUpdated callbacks and to
// the Subscription's own channel.
type Subscription struct {
	c      *Client
	key    string
	cancel context.CancelFunc
	// Acknowledged holds the filter the server agreed to honour once it
	// acknowledged the subscription.
	Acknowledged protocol.SubscriptionFilter
	acked        chan struct{}
	events       chan *jsonrpc.Message
	done         chan struct{}
	err          error
	once         sync.Once
}

// Events delivers the subscription's notifications (list changes and
// resource updates). It is closed when the subscription ends. Events that
// the receiver does not take in time are dropped rather than block the
// connection.
func (s *Subscription) Events() <-chan *jsonrpc.Message { return s.events }

// Done is closed when the subscription has ended.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err says why the subscription ended: nil for a graceful end by the
// server or by [Subscription.Close].
func (s *Subscription) Err() error {
	<-s.done
	return s.err
}

// Close ends the subscription.
func (s *Subscription) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// Listen opens a stateless subscriptions/listen stream for the
// notifications chosen by filter, and returns once the server acknowledged
// it. Legacy servers have no such stream: use [Client.Subscribe] for
// resource updates; list changes arrive on their own.
func (c *Client) Listen(ctx context.Context, filter protocol.SubscriptionFilter) (*Subscription, error) {
	if !c.stateless {
		return nil, errors.New("subscriptions/listen: the server is legacy")
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Subscription{c: c, cancel: cancel, acked: make(chan struct{}), events: make(chan *jsonrpc.Message, 64), done: make(chan struct{})}
	started := make(chan string, 1)
	go func() {
		defer close(s.done)
		defer close(s.events)
		params := &protocol.SubscriptionsListenParams{Notifications: filter}
		m, err := c.request(lctx, protocol.MethodSubscriptionsListen, c.paramsWith(wireMeta{c: c, tasks: len(filter.TaskIDs) > 0}, params), &jsonrpcapi.CallOptions{OnID: func(id int64) {
			s.key = jsonrpc.Int64ID(id).String()
			c.mu.Lock()
			c.subs[s.key] = s
			c.mu.Unlock()
			started <- s.key
		}})
		c.mu.Lock()
		delete(c.subs, s.key)
		c.mu.Unlock()
		if err != nil && lctx.Err() == nil {
			s.err = err
		}
		_ = m
	}()
	select {
	case <-s.acked:
		return s, nil
	case <-s.done:
		if s.err == nil {
			s.err = errors.New("subscriptions/listen ended before it was acknowledged")
		}
		return nil, s.err
	case <-ctx.Done():
		s.Close()
		return nil, context.Cause(ctx)
	}
}

// routeToSubscription hands a notification carrying a subscriptionId to
// its subscription.
func (c *Client) routeToSubscription(m *jsonrpc.Message) bool {
	if m.Method == protocol.NotificationCancelled {
		var p protocol.CancelledParams
		if json.Unmarshal(m.Params, &p) != nil {
			return false
		}
		c.mu.Lock()
		s := c.subs[p.RequestID.String()]
		c.mu.Unlock()
		if s != nil {
			s.once.Do(func() { s.err = fmt.Errorf("the server ended the subscription: %s", p.Reason) })
			s.cancel()
			return true
		}
		return false
	}
	var p struct {
		Meta struct {
			ID jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
		Notifications protocol.SubscriptionFilter `json:"notifications"`
	}
	if json.Unmarshal(m.Params, &p) != nil || !p.Meta.ID.IsValid() {
		return false
	}
	c.mu.Lock()
	s := c.subs[p.Meta.ID.String()]
	c.mu.Unlock()
	if s == nil {
		return false
	}
	if m.Method == protocol.NotificationSubscriptionsAcknowledged {
		s.Acknowledged = p.Notifications
		select {
		case <-s.acked:
		default:
			close(s.acked)
		}
		return true
	}
	select {
	case s.events <- m:
	default:
	}
	return false // the client-wide callbacks see it too
}

// Subscribe asks a legacy server for updates of a resource
// (resources/subscribe); they arrive at [Options.OnResourceUpdated]. For a
// stateless server it opens a listen stream for that resource instead, which
// the returned function closes. The context given to unsubscribe bounds
// the resources/unsubscribe request of a legacy server.
func (c *Client) Subscribe(ctx context.Context, uri string) (unsubscribe func(context.Context) error, err error) {
	if c.stateless {
		s, err := c.Listen(ctx, protocol.SubscriptionFilter{ResourceSubscriptions: []string{uri}})
		if err != nil {
			return nil, err
		}
		return func(context.Context) error { return s.Close() }, nil
	}
	if _, err := request[protocol.EmptyResult](c, ctx, protocol.MethodResourcesSubscribe, nil, &protocol.SubscribeParams{URI: uri}); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		_, err := request[protocol.EmptyResult](c, ctx, protocol.MethodResourcesUnsubscribe, nil, &protocol.SubscribeParams{URI: uri})
		return err
	}, nil
}
