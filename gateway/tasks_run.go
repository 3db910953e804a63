package gateway

import (
	"bytes"
	"context"
	"errors"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/client"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// noClient is the request of a task's upstream call: the client request
// that made the task was answered long ago, so a question the server asks
// during the task (sampling, elicitation, roots) finds no capability to
// be put to and is refused, never put to another client.
var noClient = &server.Request{}

// taskQuestion refuses a question about a task (its _meta names the
// related task) that reached no call of the gateway's: every upstream
// task is one the gateway runs, whose questions are not passed on, and a
// question the link would route by its gate could go to another client,
// the one with a call in flight there.
func taskQuestion(ctx context.Context, params jsontext.Value) error {
	if !bytes.Contains(params, []byte(protocol.MetaRelatedTask)) {
		return nil
	}
	if _, ok := ctx.Value(callKey{}).(*call); ok {
		return nil // routed by its call: noClient's refuses it
	}
	// Rare (the search above found the name): decoded, the members that
	// are not _meta skipped.
	var q struct {
		Meta map[string]jsontext.Value `json:"_meta"`
	}
	if json.Unmarshal(params, &q) != nil {
		return nil
	}
	if _, ok := q.Meta[protocol.MetaRelatedTask]; !ok {
		return nil
	}
	return jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "a task's question is not passed on by the gateway")
}

// id is the task's id.
func (r *taskRun) id() string { return r.rec.ID }

// work runs the task's call upstream and records how it ended.
func (r *taskRun) work(l *link, params *protocol.CallToolParams, ttl time.Duration) {
	defer r.end()
	res, err := r.call(l, params, ttl)
	r.finish(res, err, l.up.name)
}

// call makes the tool call on l: as a task of the server's when it runs
// the tool as one (polled at its own pace), else as an ordinary call.
func (r *taskRun) call(l *link, params *protocol.CallToolParams, ttl time.Duration) (*protocol.CallToolResult, error) {
	defer l.use()()
	ctx := &call{Context: r.ctx, req: noClient}
	c, err := l.client(ctx)
	if err != nil {
		return nil, err
	}
	res, err := r.start(c, params, ttl)
	if err != nil || res != nil {
		return res, err
	}
	res, err = c.WaitTask(ctx, r.upstreamID(), &client.WaitOptions{OnStatus: r.upstreamStatus, PollInterval: r.m.opts.PollInterval})
	if err != nil && r.ctx.Err() != nil {
		r.cancelUpstream(c)
	}
	return res, err
}

// startGrace is how long the call that makes the server's task may go on
// once the task was cancelled: long enough to learn the server's task
// id, to cancel that task, not the call, which would leave it running.
const startGrace = 5 * time.Second

// start makes the call, as a task when the server takes it as one: the
// result is nil then, and the server's task id recorded. An ordinary
// call's result comes at once.
func (r *taskRun) start(c *client.Client, params *protocol.CallToolParams, ttl time.Duration) (*protocol.CallToolResult, error) {
	sctx, scancel := context.WithCancelCause(context.WithoutCancel(r.ctx))
	defer scancel(nil)
	stop := context.AfterFunc(r.ctx, func() {
		t := time.NewTimer(startGrace)
		defer t.Stop()
		select {
		case <-t.C:
			scancel(context.Cause(r.ctx))
		case <-sctx.Done():
		}
	})
	defer stop()
	ctx := &call{Context: sctx, req: noClient}
	opts := &client.TaskOptions{TTL: ttl, Detach: true, WaitOptions: client.WaitOptions{OnStatus: r.upstreamStatus}}
	res, err := c.CallTool(ctx, params, client.AsTask(opts))
	if errors.Is(err, client.ErrNoTasks) {
		// A server of a revision before tasks: the call is the task.
		return c.CallTool(ctx, params)
	}
	if err == nil && res == nil && r.ctx.Err() != nil {
		r.cancelUpstream(c)
		return nil, context.Cause(r.ctx)
	}
	return res, err
}

func (r *taskRun) upstreamID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.upID
}

// cancelUpstream asks the server to cancel its task, when it made one
// (an ordinary call is cancelled with its context).
func (r *taskRun) cancelUpstream(c *client.Client) {
	id := r.upstreamID()
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.CancelTask(ctx, id); err != nil {
		r.m.g.log.Debug("gateway: cancelling a task upstream failed", "task", r.id(), "error", err)
	}
}

// upstreamStatus mirrors the server's task into the record as it goes:
// its id, and its status message while it works. Its questions are not
// passed on (see noClient), so its status stays working until it ends.
func (r *taskRun) upstreamStatus(t *protocol.DetailedTask) {
	r.mu.Lock()
	r.upID = t.TaskID // kept apart from the record: a cancelled task keeps no change
	rec := *r.rec
	r.mu.Unlock()
	if protocol.Terminal(t.Status) {
		return // finish records the end, with the result
	}
	if rec.UpstreamID == t.TaskID && rec.StatusMessage == t.StatusMessage {
		return
	}
	rec.UpstreamID, rec.StatusMessage = t.TaskID, t.StatusMessage
	r.save(&rec)
}

// save writes a new state of the record; a task finished meanwhile (a
// cancellation through another replica) stops its work instead. The
// error is the store's.
func (r *taskRun) save(rec *TaskRecord) error {
	rec.UpdatedAt = time.Now().UTC()
	ctx, cancel := context.WithTimeout(context.Background(), r.m.opts.Lease)
	defer cancel()
	ok, err := r.m.store.UpdateTask(ctx, rec)
	if err != nil {
		r.m.g.log.Warn("gateway: storing a task failed", "task", rec.ID, "error", err)
		return err
	}
	if !ok {
		r.cancel(errTaskCancelled)
		return nil
	}
	r.mu.Lock()
	r.rec = rec
	r.mu.Unlock()
	r.notify(rec)
	return nil
}

// saveTries bounds the attempts to store how a task ended: a store down
// for a moment (Redis restarting, paused) must not leave the task working
// for good, its result lost.
const saveTries = 10

// saveEnd stores how the task ended, trying again a while (each attempt
// a second after the last failed) while the store fails, until the
// gateway closes.
func (r *taskRun) saveEnd(rec *TaskRecord) {
	for try := 1; r.save(rec) != nil && try < saveTries; try++ {
		t := time.NewTimer(time.Second)
		select {
		case <-t.C:
		case <-r.m.g.closing:
			t.Stop()
			return
		}
	}
}

// notify tells the legacy session that made the task of its new status
// ("notifications/tasks/status ... MAY send").
func (r *taskRun) notify(rec *TaskRecord) {
	if r.sess == nil || rec.Stateless {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.sess.Notify(ctx, protocol.NotificationTaskStatus, &protocol.TaskStatusParams{Task: legacyTask(rec)})
}

// finish records how the task's call ended.
func (r *taskRun) finish(res *protocol.CallToolResult, err error, server string) {
	r.mu.Lock()
	rec := *r.rec
	r.mu.Unlock()
	switch cause := context.Cause(r.ctx); {
	case errors.Is(cause, errTaskCancelled):
		return // the cancellation is recorded already
	case errors.Is(cause, errTaskClosing):
		fail(&rec, jsonrpc.NewError(jsonrpc.CodeInternalError, "the gateway replica that ran this task shut down before it ended"))
	case err != nil:
		r.failed(&rec, err, server)
	default:
		rec.Status, rec.StatusMessage = protocol.TaskCompleted, ""
		rec.Result, err = taskResult(res, rec.Stateless)
		if err != nil {
			fail(&rec, jsonrpc.NewError(jsonrpc.CodeInternalError, "upstream %q: encoding the result: %v", server, err))
		}
	}
	r.saveEnd(&rec)
}

// failed records the error a call ended with.
func (r *taskRun) failed(rec *TaskRecord, err error, server string) {
	var tf *client.TaskFailedError
	if errors.As(err, &tf) && tf.Err == nil {
		rec.Status, rec.StatusMessage = protocol.TaskCancelled, "The server cancelled the task."
		return
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		je = jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", upstreamError(server, err))
	}
	fail(rec, je)
}

func fail(rec *TaskRecord, e *jsonrpc.Error) {
	rec.Status, rec.StatusMessage, rec.Error, rec.Result = protocol.TaskFailed, e.Message, e, nil
}

// taskResult is a task's result as the client's era shows it: the
// server's identity is the gateway's business.
func taskResult(res *protocol.CallToolResult, stateless bool) ([]byte, error) {
	c := *res
	result(nil, &c.ResultFields)
	if stateless {
		c.ResultType = protocol.ResultComplete
	}
	return json.Marshal(&c)
}

// end unregisters the run once its record is final.
func (r *taskRun) end() {
	m := r.m
	m.mu.Lock()
	delete(m.runs, r.id())
	if m.byOwner[r.owner]--; m.byOwner[r.owner] <= 0 {
		delete(m.byOwner, r.owner)
	}
	m.mu.Unlock()
	close(r.done)
	r.cancel(nil)
}
