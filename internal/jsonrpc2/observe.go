package jsonrpc2

import "context"

// Observer holds the functions an [Observe]d stream calls. Either may be
// nil. They are called on the goroutine that reads or writes, before the
// message is returned or sent, and must not block for long or keep m
// beyond the call: the message's memory may be reused once it is handled.
type Observer struct {
	// Message sees every message that crosses the stream: sent is true
	// for one written (Write, and a [Batcher]'s WriteBuffered or a
	// [Requester]'s Request), false for one received (Read, and the
	// answer a Requester's Request returns).
	Message func(m *Message, sent bool)
	// ReadError sees every error Read returns.
	ReadError func(err error)
}

// Observe wraps s so that o sees every message that crosses it, for
// tracing or accounting, while a [Conn] over the wrapper takes the same
// paths as over s: the wrapper implements [Requester] and [Batcher]
// exactly when s does, by delegating to s and observing what passes, and
// it is a [Wrapper], so that [As] finds s's other capabilities.
func Observe(s Stream, o Observer) Stream {
	t := &observed{s: s, o: o}
	b, batches := s.(Batcher)
	r, requests := s.(Requester)
	switch {
	case batches && requests:
		return &observedBoth{observedBatcher{t, b}, r}
	case batches:
		return &observedBatcher{t, b}
	case requests:
		return &observedRequester{t, r}
	}
	return t
}

type observed struct {
	s Stream
	o Observer
}

func (t *observed) Read() (*Message, error) {
	m, err := t.s.Read()
	switch {
	case err != nil:
		if t.o.ReadError != nil {
			t.o.ReadError(err)
		}
	case m != nil:
		t.see(m, false)
	}
	return m, err
}

func (t *observed) Write(ctx context.Context, m *Message) error {
	t.see(m, true)
	return t.s.Write(ctx, m)
}

func (t *observed) Close() error { return t.s.Close() }

// Unwrap returns the observed stream ([Wrapper]).
func (t *observed) Unwrap() Stream { return t.s }

func (t *observed) see(m *Message, sent bool) {
	if t.o.Message != nil {
		t.o.Message(m, sent)
	}
}

func (t *observed) request(ctx context.Context, r Requester, m *Message) (*Message, error) {
	t.see(m, true)
	reply, err := r.Request(ctx, m)
	if reply != nil {
		t.see(reply, false)
	}
	return reply, err
}

// observedBatcher is an observed [Batcher].
type observedBatcher struct {
	*observed
	b Batcher
}

func (t *observedBatcher) Buffered() bool { return t.b.Buffered() }

func (t *observedBatcher) WriteBuffered(ctx context.Context, m *Message) error {
	t.see(m, true)
	return t.b.WriteBuffered(ctx, m)
}

// observedRequester is an observed [Requester].
type observedRequester struct {
	*observed
	r Requester
}

func (t *observedRequester) Request(ctx context.Context, m *Message) (*Message, error) {
	return t.request(ctx, t.r, m)
}

// observedBoth is an observed [Batcher] and [Requester].
type observedBoth struct {
	observedBatcher
	r Requester
}

func (t *observedBoth) Request(ctx context.Context, m *Message) (*Message, error) {
	return t.request(ctx, t.r, m)
}
