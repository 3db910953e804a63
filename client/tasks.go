package client

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// Tasks: a tool call the server runs in the background, polled until it
// ends. Both eras look the same to the caller, as [protocol.DetailedTask]
// values: the tasks extension of the stateless era
// (io.modelcontextprotocol/tasks, declared on the requests of [AsTask]
// calls and of these methods only, so that ordinary calls never get a
// task back), and the experimental tasks of 2025-11-25 sessions (a task
// member on tools/call, ttl and pollInterval, tasks/result and
// tasks/list).

type tasksKey struct{}

// withTasks marks requests that accept tasks: their _meta declares the
// extension, and a tools/call may be answered with a task.
func withTasks(ctx context.Context) context.Context { return context.WithValue(ctx, tasksKey{}, true) }

func acceptsTasks(ctx context.Context) bool {
	v, _ := ctx.Value(tasksKey{}).(bool)
	return v
}

// taskCapsJSON is the client's capabilities with the tasks extension.
func (c *Client) taskCapsJSON() []byte {
	c.taskCapsOnce.Do(func() {
		caps := c.caps
		caps.Extensions = maps.Clone(caps.Extensions)
		if caps.Extensions == nil {
			caps.Extensions = map[string]any{}
		}
		caps.Extensions[protocol.ExtensionTasks] = map[string]any{}
		c.taskCaps, _ = json.Marshal(&caps)
	})
	return c.taskCaps
}

// ErrNoTasks is returned for a task operation the server or the era does
// not offer (tasks/list in the stateless era, tasks in revisions before
// 2025-11-25).
var ErrNoTasks = errors.New("client: the server does not offer this task operation")

// TaskOptions configure a call made with [AsTask]. The zero value is
// usable.
type TaskOptions struct {
	// TTL asks a 2025-11-25 server to keep the task this long after its
	// creation; zero leaves it to the server. (The stateless era's
	// server alone decides.)
	TTL time.Duration
	// Detach makes the call return once the server made the task, with
	// a nil result and a nil error: OnStatus has then seen the task,
	// whose TaskID [Client.WaitTask], [Client.GetTask] and
	// [Client.CancelTask] take, from this process or another.
	Detach bool
	// WaitOptions are how the call waits for the task (without Detach).
	// OnStatus sees the task first as the server made it.
	WaitOptions
}

// AsTask lets the server run the call as a task, for tools that take
// minutes: the call polls the task until it ends (see [Client.WaitTask])
// and returns the tool's result, or with opts.Detach returns once the task
// is made. A server may still answer at once (a quick call, or a tool it
// does not run as a task): the call then returns that result. Questions
// the server asks go to the client's callbacks, as for any call. opts may
// be nil. Tasks are the extension io.modelcontextprotocol/tasks of the
// stateless era, declared on the requests of these calls only, so that
// ordinary calls never get a task back, and the experimental tasks of
// 2025-11-25 sessions; a session of an older revision has none
// ([ErrNoTasks]).
func AsTask(opts *TaskOptions) CallOption {
	if opts == nil {
		opts = &TaskOptions{}
	}
	return CallOption{task: opts}
}

// callTask makes tc as a task, and waits for it unless o.Detach.
func (c *Client) callTask(ctx context.Context, tc *toolCall, o *TaskOptions) (*protocol.CallToolResult, error) {
	t, res, err := c.startTask(ctx, tc, o.TTL)
	if err != nil || t == nil {
		return res, err
	}
	if o.OnStatus != nil {
		o.OnStatus(t)
	}
	if o.Detach {
		return nil, nil
	}
	return c.WaitTask(ctx, t.TaskID, &o.WaitOptions)
}

// startTask calls a tool, letting the server run it as a task: it returns
// the task when the server made one, or else the result.
func (c *Client) startTask(ctx context.Context, tc *toolCall, ttl time.Duration) (*protocol.DetailedTask, *protocol.CallToolResult, error) {
	var task *protocol.TaskMetadata
	if !c.stateless {
		if !protocol.AtLeast(c.version, protocol.Version20251125) {
			return nil, nil, fmt.Errorf("%w: tasks came with 2025-11-25, this session speaks %s", ErrNoTasks, c.version)
		}
		task = &protocol.TaskMetadata{}
		if ttl > 0 {
			ms := ttl.Milliseconds()
			task.TTL = &ms
		}
	}
	res, m, err := c.callTool(withTasks(ctx), tc.name, tc.args, tc.user, tc.mp, task)
	var je *jsonrpc.Error
	if task != nil && errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound {
		// A 2025-11-25 tool that cannot run as a task ("Servers SHOULD
		// return a -32601 ... error if a client attempts to do so"): call
		// it as it can be called.
		res, m, err = c.callTool(ctx, tc.name, tc.args, tc.user, tc.mp, nil)
	}
	if err != nil {
		return nil, nil, err
	}
	if t, ok, err := createdTask(m.Result); ok || err != nil {
		return t, nil, err
	}
	return nil, res, nil
}

// createdTask reads the task of a tools/call answer, either era's shape.
func createdTask(raw jsontext.Value) (*protocol.DetailedTask, bool, error) {
	var probe struct {
		ResultType string         `json:"resultType"`
		Task       *protocol.Task `json:"task"`
		TaskID     jsontext.Value `json:"taskId"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, false, fmt.Errorf("tools/call: invalid result: %w", err)
	}
	switch {
	case probe.ResultType == protocol.ResultTask:
		t := new(protocol.DetailedTask)
		if err := json.Unmarshal(raw, t); err != nil || t.TaskID == "" {
			return nil, true, fmt.Errorf("tools/call: invalid task: %v", err)
		}
		return t, true, nil
	case probe.Task != nil && probe.ResultType == "":
		return fromLegacy(probe.Task), true, nil
	}
	return nil, false, nil
}

// fromLegacy shows a 2025-11-25 task as the extension's.
func fromLegacy(t *protocol.Task) *protocol.DetailedTask {
	return &protocol.DetailedTask{TaskID: t.TaskID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt, LastUpdatedAt: t.LastUpdatedAt, TTLMs: t.TTL, PollIntervalMs: t.PollInterval}
}

// taskRequest sends a tasks/* request (declaring the extension in the
// stateless era) and decodes its result into out.
func (c *Client) taskRequest(ctx context.Context, method string, params, out any) error {
	m, err := c.call(withTasks(ctx), method, nil, func(meta wireMeta) any { return c.paramsWith(meta, params) })
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(m.Result, out); err != nil {
		return fmt.Errorf("%s: invalid result: %w", method, err)
	}
	return nil
}

type taskIDParams struct {
	TaskID string `json:"taskId"`
}

// GetTask returns the state of a task. In the stateless era a finished
// task carries its result or error, and one waiting for input its
// questions.
func (c *Client) GetTask(ctx context.Context, id string) (*protocol.DetailedTask, error) {
	if c.stateless {
		t := new(protocol.DetailedTask)
		if err := c.taskRequest(ctx, protocol.MethodTasksGet, &taskIDParams{id}, t); err != nil {
			return nil, err
		}
		return t, nil
	}
	var t protocol.Task
	if err := c.taskRequest(ctx, protocol.MethodTasksGet, &taskIDParams{id}, &t); err != nil {
		return nil, err
	}
	return fromLegacy(&t), nil
}

// CancelTask asks the server to cancel a task. Cancellation is
// cooperative: the task may still end otherwise.
func (c *Client) CancelTask(ctx context.Context, id string) error {
	return c.taskRequest(ctx, protocol.MethodTasksCancel, &taskIDParams{id}, nil)
}

// ListTasks lists the tasks of this session (2025-11-25 only: the tasks
// extension has no tasks/list, on purpose).
func (c *Client) ListTasks(ctx context.Context, cursor string) (*protocol.ListTasksResult, error) {
	if c.stateless {
		return nil, fmt.Errorf("%w: the tasks extension has no tasks/list", ErrNoTasks)
	}
	res := new(protocol.ListTasksResult)
	if err := c.taskRequest(ctx, protocol.MethodTasksList, &protocol.PaginatedParams{Cursor: cursor}, res); err != nil {
		return nil, err
	}
	return res, nil
}

// TaskFailedError is a task that ended with a JSON-RPC error (status
// failed) or was cancelled.
type TaskFailedError struct {
	TaskID string
	Status string
	Err    *jsonrpc.Error // nil for a cancelled task
}

func (e *TaskFailedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("task %s failed: %s", e.TaskID, e.Err.Message)
	}
	return fmt.Sprintf("task %s was %s", e.TaskID, e.Status)
}

func (e *TaskFailedError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// WaitOptions configure [Client.WaitTask] and the waiting of [AsTask]. The zero value is usable.
type WaitOptions struct {
	// OnStatus sees the task each time its status or status message
	// changes (and first as it is).
	OnStatus func(t *protocol.DetailedTask)
	// PollInterval is used when the server suggests none (default 1s).
	PollInterval time.Duration
}

// WaitTask polls a task until it ends, honouring the server's poll
// interval (which may change as the task goes), answers the questions the
// task asks through the client's callbacks (sampling, elicitation, roots:
// the same as for an ordinary call, each question once), and returns the
// tool's result. A task that failed or was cancelled is a
// *[TaskFailedError]. Cancelling ctx stops the waiting, not the task (see
// [Client.CancelTask]).
func (c *Client) WaitTask(ctx context.Context, id string, opts *WaitOptions) (*protocol.CallToolResult, error) {
	if opts == nil {
		opts = &WaitOptions{}
	}
	interval := opts.PollInterval
	if interval <= 0 {
		interval = time.Second
	}
	answered := map[string]bool{}
	var last string
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-timer.C:
		}
		t, err := c.GetTask(ctx, id)
		if err != nil {
			return nil, err
		}
		if s := t.Status + "\x00" + t.StatusMessage; s != last && opts.OnStatus != nil {
			last = s
			opts.OnStatus(t)
		}
		if protocol.Terminal(t.Status) {
			return c.taskOutcome(ctx, t)
		}
		if t.Status == protocol.TaskInputRequired && len(t.InputRequests) > 0 {
			if err := c.answerTask(ctx, id, t.InputRequests, answered); err != nil {
				return nil, err
			}
		}
		next := interval
		if t.PollIntervalMs != nil && *t.PollIntervalMs > 0 {
			next = time.Duration(*t.PollIntervalMs) * time.Millisecond
		}
		timer.Reset(next)
	}
}

// answerTask answers the questions a task asks that were not answered
// yet ("Clients SHOULD deduplicate inputRequests keys across consecutive
// polls").
func (c *Client) answerTask(ctx context.Context, id string, reqs map[string]protocol.InputRequest, answered map[string]bool) error {
	open := map[string]protocol.InputRequest{}
	for k, r := range reqs {
		if !answered[k] {
			open[k] = r
		}
	}
	if len(open) == 0 {
		return nil
	}
	responses, err := c.answerAll(ctx, open)
	if err != nil {
		return fmt.Errorf("task %s: %w", id, err)
	}
	for k := range open {
		answered[k] = true
	}
	return c.taskRequest(ctx, protocol.MethodTasksUpdate, &protocol.UpdateTaskParams{TaskID: id, InputResponses: responses}, nil)
}

// taskOutcome is the result of a finished task.
func (c *Client) taskOutcome(ctx context.Context, t *protocol.DetailedTask) (*protocol.CallToolResult, error) {
	switch {
	case !c.stateless && t.Status != protocol.TaskCancelled:
		// 2025-11-25 keeps the result behind tasks/result, which gives
		// the request's answer or its error.
		res := new(protocol.CallToolResult)
		err := c.taskRequest(ctx, protocol.MethodTasksResult, &taskIDParams{t.TaskID}, res)
		var je *jsonrpc.Error
		if errors.As(err, &je) && t.Status == protocol.TaskFailed {
			return nil, &TaskFailedError{TaskID: t.TaskID, Status: t.Status, Err: je}
		}
		return res, err
	case t.Status == protocol.TaskCompleted:
		res := new(protocol.CallToolResult)
		if err := c.decodeResult(t.Result, res); err != nil {
			return nil, fmt.Errorf("task %s: invalid result: %w", t.TaskID, err)
		}
		return res, nil
	case t.Status == protocol.TaskFailed:
		e := &TaskFailedError{TaskID: t.TaskID, Status: t.Status, Err: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: t.StatusMessage}}
		if len(t.Error) > 0 {
			json.Unmarshal(t.Error, e.Err)
		}
		return nil, e
	}
	return nil, &TaskFailedError{TaskID: t.TaskID, Status: t.Status}
}

// taskState is the Client's part in tasks.
type taskState struct {
	taskCapsOnce sync.Once
	taskCaps     []byte
}
