package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/internal/serverapi"
	"github.com/ferrymcp/ferry/internal/taskwire"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// TaskOptions configure how tool calls run as tasks. The zero value is
// usable.
//
// A tool runs as a task when it declares it can (its
// Execution.TaskSupport is "optional" or "required") and the request
// allows it: in the stateless era a request whose client declares the
// io.modelcontextprotocol/tasks extension (the server then makes every
// such call a task; a "required" tool called by a client without the
// extension fails with MissingRequiredClientCapability), in a 2025-11-25
// session a tools/call with a task member (a "required" tool called
// without one fails with -32601, as that revision says). Task ids are 128
// random bits: without an authorization context to bind tasks to, the id
// is what grants access to a task.
type TaskOptions struct {
	// Store keeps the tasks' state; nil means a [MemoryTaskStore] of
	// MaxTasks tasks.
	Store TaskStore
	// MaxTasks bounds the tasks of the default store (default 10,000),
	// MaxTasksPerClient the tasks one client holds there, running or
	// finished and unexpired (default a tenth of MaxTasks: 1,000). A
	// client is the authenticated caller, else the client's address
	// (clients behind one proxy share its address), else the legacy
	// session. A client at its share, or in a full store, makes room only
	// by its own finished tasks, oldest first: another client's result is
	// never dropped before its TTL. Past that, creating a task fails with
	// an internal error, "too many tasks".
	MaxTasks          int
	MaxTasksPerClient int
	// TTL is how long a task is kept after its creation when the client
	// does not ask for a TTL (default one hour); MaxTTL bounds what a
	// 2025-11-25 client may ask for (default 24 hours).
	TTL    time.Duration
	MaxTTL time.Duration
	// PollInterval is the interval between polls suggested to clients
	// (default 500 ms).
	PollInterval time.Duration
	// Owner binds tasks to who created them ("When an authorization
	// context is provided, receivers MUST bind tasks to said context"):
	// it names the caller of a request, e.g. from the authorization
	// middleware's context; a task is then reached (get, update, cancel,
	// result) and listed only by requests with the same owner. Nil: the
	// caller that ferry's authorization (auth/resourceserver)
	// authenticated, whose tasks only it reaches and lists; without one,
	// a task is reached by its id alone, and a 2025-11-25 session lists
	// the tasks it created (never those of an ended session).
	Owner func(ctx context.Context, req *Request) string
}

// taskManager holds the tasks running in this server: their state is in
// the store, their work and open questions here.
type taskManager struct {
	once  sync.Once
	opts  TaskOptions
	mu    sync.Mutex
	runs  map[string]*taskRun
	close chan struct{} // closed by closeAll
}

func (s *Server) taskMgr() *taskManager {
	m := &s.tasks
	m.once.Do(func() {
		m.opts = s.opts.Tasks
		o := &m.opts
		if o.Store == nil {
			st := NewMemoryTaskStore(o.MaxTasks)
			if o.MaxTasksPerClient > 0 {
				st.perClient = o.MaxTasksPerClient
			}
			o.Store = st
		}
		if o.TTL <= 0 {
			o.TTL = time.Hour
		}
		if o.MaxTTL <= 0 {
			o.MaxTTL = 24 * time.Hour
		}
		if o.PollInterval <= 0 {
			o.PollInterval = 500 * time.Millisecond
		}
		m.runs = map[string]*taskRun{}
		m.close = make(chan struct{})
	})
	return m
}

// closeAll cancels every running task (Server.Close).
func (m *taskManager) closeAll() {
	m.mu.Lock()
	runs := make([]*taskRun, 0, len(m.runs))
	for _, r := range m.runs {
		runs = append(runs, r)
	}
	m.mu.Unlock()
	for _, r := range runs {
		r.cancel(errServerClosed)
	}
}

var errServerClosed = errors.New("the server is closing")

// errTaskCancelled is the cause of a task's context when the client
// cancelled the task.
var errTaskCancelled = errors.New("the task was cancelled")

// taskRun is a task whose work runs in this server.
type taskRun struct {
	s      *Server
	state  *TaskState // guarded by mu; written to the store on each change
	cancel context.CancelCauseFunc
	req    *Request
	done   chan struct{} // closed when the state turned terminal

	mu sync.Mutex
	// published is set once the store took the task: a task it refused
	// (too many tasks) is never stored, however its handler ends.
	published bool
	waiting   map[string]chan jsontext.Value // open questions by key
	used      map[string]bool                // every key asked, for uniqueness
	changed   chan struct{}                  // closed and replaced at each change
}

// toolTaskSupport is a tool's Execution.TaskSupport.
func toolTaskSupport(t *protocol.Tool) string {
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return protocol.TaskSupportForbidden
	}
	return t.Execution.TaskSupport
}

// acceptsTasks reports whether a stateless request's client declared the
// tasks extension.
func acceptsTasks(caps *protocol.ClientCapabilities) bool {
	_, ok := caps.Extensions[protocol.ExtensionTasks]
	return ok
}

// missingTasksExtension is the error for a request that needs the
// extension: "the server MUST return an error with the code -32021".
func missingTasksExtension() error {
	need := protocol.ClientCapabilities{Extensions: map[string]any{protocol.ExtensionTasks: map[string]any{}}}
	data, _ := json.Marshal(&protocol.MissingRequiredClientCapabilityData{RequiredCapabilities: need})
	return &jsonrpc.Error{Code: protocol.CodeMissingRequiredClientCapability, Message: "Missing required client capability", Data: data}
}

// taskCall decides whether a tools/call runs as a task: ok is false for
// an ordinary call, and err set when the call cannot be served.
func (s *Server) taskCall(r *Request, e *toolEntry, p *callToolParams) (ok bool, err error) {
	support := toolTaskSupport(&e.tool)
	if r.stateless {
		// A legacy task member is ignored here: "the server is the sole
		// decider".
		if support == protocol.TaskSupportForbidden {
			return false, nil
		}
		if !acceptsTasks(&r.ClientCapabilities) {
			if support == protocol.TaskSupportRequired {
				return false, missingTasksExtension()
			}
			return false, nil
		}
		return true, nil
	}
	if !protocol.AtLeast(r.ProtocolVersion, protocol.Version20251125) {
		return false, nil // tasks came with 2025-11-25
	}
	switch {
	case p.Task == nil && support == protocol.TaskSupportRequired:
		return false, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "tool %q can only run as a task: send tools/call with a task member", p.Name)
	case p.Task != nil && support == protocol.TaskSupportForbidden:
		return false, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "tool %q cannot run as a task", p.Name)
	}
	return p.Task != nil, nil
}

// startTask runs a tools/call as a task: the work goes on in the
// background and the call is answered with the task. A tool added with
// [Server.AddTaskTool] first runs as an ordinary call, until its handler
// calls [Request.StartTask].
func (s *Server) startTask(ctx context.Context, r *Request, e *toolEntry, args jsontext.Value) (any, error) {
	m := s.taskMgr()
	ttl := m.opts.TTL
	if t := r.toolCall.Task; !r.stateless && t != nil && t.TTL != nil && *t.TTL > 0 {
		ttl = min(time.Duration(*t.TTL)*time.Millisecond, m.opts.MaxTTL)
	}
	now := time.Now().UTC()
	run := &taskRun{s: s, req: r, done: make(chan struct{}), changed: make(chan struct{}),
		waiting: map[string]chan jsontext.Value{}, used: map[string]bool{},
		state: &TaskState{ID: randomID(), Stateless: r.stateless, Status: protocol.TaskWorking,
			CreatedAt: now, UpdatedAt: now, TTL: ttl, PollInterval: m.opts.PollInterval}}
	run.state.Owner, run.state.Client = s.taskOwner(ctx, r), taskClient(ctx, r)
	detach(r, args)
	args = r.toolCall.Arguments
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	tctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	run.cancel = cancel
	started := make(chan struct{})
	result := make(chan taskOutcome, 1)
	if e.explicitStart {
		r.pendingTask = run
		r.taskStarted = started
	} else {
		r.task = run
		close(started)
	}
	// Until it is a task, the call is the request's: cancelled with it.
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	go func() {
		res, err := e.handler(tctx, r, args)
		select {
		case <-started:
			run.finish(res, err, tctx)
		default:
			result <- taskOutcome{res, err} // it never became a task
		}
	}()
	select {
	case <-started:
		stop()
	case o := <-result:
		stop()
		cancel(nil)
		return s.toolOutcome(ctx, r, o.res, o.err)
	}
	if err := run.publish(ctx); err != nil {
		cancel(err)
		return nil, err
	}
	return run.created(), nil
}

type taskOutcome struct {
	res any
	err error
}

// publish stores the new task and registers its run, before the call is
// answered: "A server MUST NOT return CreateTaskResult until the task is
// durably created".
func (t *taskRun) publish(ctx context.Context) error {
	m := t.s.taskMgr()
	t.mu.Lock()
	err := m.opts.Store.Put(ctx, t.state)
	t.published = err == nil
	t.mu.Unlock()
	if err != nil {
		return jsonrpc.NewError(jsonrpc.CodeInternalError, "creating the task: %v", err)
	}
	m.mu.Lock()
	m.runs[t.state.ID] = t
	m.mu.Unlock()
	t.s.log.Debug("task created", "task", t.state.ID, "tool", t.req.toolCall.Name)
	return nil
}

// created is the answer to the call that created the task.
func (t *taskRun) created() any {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state.Stateless {
		d := detailed(t.state)
		d.ResultType = protocol.ResultTask
		return d
	}
	return &protocol.CreateTaskResult{Task: legacyTask(t.state)}
}

// detach makes the request outlive its call: the task's handler goes on
// after the call was answered and the transport reused the call's memory.
func detach(r *Request, args jsontext.Value) {
	r.msg.Lent = false
	r.toolCall.Arguments = clone(args)
	r.RawMeta = clone(r.RawMeta)
	if r.stateless {
		// Neither progress nor log messages go anywhere once the call is
		// answered: "notifications/progress and notifications/message
		// ... are not supported on tasks".
		r.progressToken, r.logLevel = nil, ""
	} else {
		// "The progressToken provided in the initial request remains
		// valid throughout the task lifetime."
		r.progressToken = clone(r.progressToken)
	}
}

func clone(v jsontext.Value) jsontext.Value {
	if v == nil {
		return nil
	}
	return append(jsontext.Value(nil), v...)
}

// StartTask turns the call of a tool added with [Server.AddTaskTool] into
// a task: the client is answered with the task at once, and the handler
// goes on in the background, its questions to the client now asked
// through the task. It is an error to call it elsewhere, or twice.
func (r *Request) StartTask() error {
	if r.pendingTask == nil || r.task != nil {
		return errors.New("server: StartTask outside a task-capable call of a tool added with AddTaskTool")
	}
	r.task = r.pendingTask
	close(r.taskStarted)
	return nil
}

// TaskID returns the id of the task the request runs as, or "".
func (r *Request) TaskID() string {
	if r.task == nil {
		return ""
	}
	return r.task.state.ID
}

// AddTaskTool adds a task-capable tool (t.Execution.TaskSupport
// "optional" when unset) whose handler decides when its call becomes a
// task: the handler runs as an ordinary call, which may ask the client
// questions first (as multi round-trip requests in the stateless era) or
// answer at once, until it calls [Request.StartTask]. Tools added with
// [Server.AddTool] whose Execution allows tasks become tasks as soon as
// they are called.
func (s *Server) AddTaskTool(t *protocol.Tool, h ToolHandler) {
	c := *t
	if c.Execution == nil || c.Execution.TaskSupport == "" || c.Execution.TaskSupport == protocol.TaskSupportForbidden {
		c.Execution = &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}
	}
	s.AddTool(&c, h)
	s.mu.Lock()
	if e, ok := s.tools.get(c.Name); ok {
		e.explicitStart = true
	}
	s.mu.Unlock()
}

// toolOutcome turns what a tool handler returned into the call's answer,
// as callTool does for ordinary calls.
func (s *Server) toolOutcome(ctx context.Context, r *Request, res any, err error) (any, error) {
	res, err = runMRTR(ctx, r, func() (any, error) { return res, err })
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return nil, je
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return toolError(err), nil
	}
	if tr, ok := res.(*protocol.CallToolResult); ok && tr == nil {
		return nil, fmt.Errorf("tool %q returned no result", r.toolCall.Name)
	}
	return res, nil
}

// finish records how the task's handler ended.
func (t *taskRun) finish(res any, err error, ctx context.Context) {
	defer t.cancel(nil)
	var je *jsonrpc.Error
	switch {
	case context.Cause(ctx) == errTaskCancelled:
		t.settle(protocol.TaskCancelled, "The task was cancelled.", nil, nil)
		return
	case err != nil && errors.As(err, &je):
		t.settle(protocol.TaskFailed, je.Message, nil, je)
		return
	case err != nil && ctx.Err() != nil:
		t.settle(protocol.TaskFailed, context.Cause(ctx).Error(), nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "%v", context.Cause(ctx)))
		return
	case err != nil:
		res = toolError(err)
	case res == nil:
		t.settle(protocol.TaskFailed, "the tool returned no result", nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "tool %q returned no result", t.req.toolCall.Name))
		return
	}
	if t.state.Stateless {
		res = t.s.stamp(res)
	}
	raw, merr := json.Marshal(res)
	if merr != nil {
		t.settle(protocol.TaskFailed, merr.Error(), nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "encoding the result: %v", merr))
		return
	}
	t.settle(protocol.TaskCompleted, "", raw, nil)
}

// settle moves the task to a terminal status, unless it is in one
// already: "Once a task is cancelled, it MUST remain in cancelled status
// even if execution continues to completion or fails."
func (t *taskRun) settle(status, msg string, result jsontext.Value, rpcErr *jsonrpc.Error) bool {
	t.mu.Lock()
	if protocol.Terminal(t.state.Status) {
		t.mu.Unlock()
		return false
	}
	t.state.Status, t.state.StatusMessage = status, msg
	t.state.Result, t.state.Error, t.state.InputRequests = result, rpcErr, nil
	t.mu.Unlock()
	t.update()
	close(t.done)
	m := t.s.taskMgr()
	m.mu.Lock()
	delete(m.runs, t.state.ID)
	m.mu.Unlock()
	return true
}

// update stores the task's state after a change and tells whoever waits
// for one.
func (t *taskRun) update() {
	t.mu.Lock()
	t.state.UpdatedAt = time.Now().UTC()
	st := t.state.clone()
	close(t.changed)
	t.changed = make(chan struct{})
	published := t.published
	t.mu.Unlock()
	if !published {
		return
	}
	if err := t.s.taskMgr().opts.Store.Put(context.Background(), st); err != nil {
		t.s.log.Warn("storing a task", "task", st.ID, "error", err)
	}
	if st.Stateless {
		t.s.notifyTask(st)
	} else if t.req.Session != nil {
		// "Receivers MAY send notifications/tasks/status notifications
		// when a task's status changes."
		n := &protocol.TaskStatusParams{Task: legacyTask(st)}
		t.req.peer.Notify(context.Background(), protocol.NotificationTaskStatus, n)
	}
}

// ask puts questions to the client through the task and waits for the
// answers: the task is input_required until every question is answered
// (stateless: through tasks/update; 2025-11-25: as server-to-client
// requests tied to the task).
func (t *taskRun) ask(ctx context.Context, qs []Question) (map[string]jsontext.Value, error) {
	if !t.state.Stateless {
		return t.askLegacy(ctx, qs)
	}
	chans := make(map[string]chan jsontext.Value, len(qs))
	keys := make(map[string]string, len(qs)) // question key -> wire key
	t.mu.Lock()
	if t.state.InputRequests == nil {
		t.state.InputRequests = map[string]protocol.InputRequest{}
	}
	for _, q := range qs {
		params, err := json.Marshal(questionParams(q.Params))
		if err != nil {
			t.mu.Unlock()
			return nil, fmt.Errorf("encoding %s params: %w", q.Method, err)
		}
		// "Each request key in inputRequests MUST be unique over the
		// lifetime of a single task."
		key := q.Key
		for n := 2; t.used[key]; n++ {
			key = fmt.Sprintf("%s-%d", q.Key, n)
		}
		t.used[key] = true
		keys[q.Key] = key
		ch := make(chan jsontext.Value, 1)
		chans[key] = ch
		t.waiting[key] = ch
		t.state.InputRequests[key] = protocol.InputRequest{Method: q.Method, Params: params}
	}
	t.state.Status = protocol.TaskInputRequired
	t.mu.Unlock()
	t.update()
	answers := make(map[string]jsontext.Value, len(qs))
	for _, q := range qs {
		select {
		case raw := <-chans[keys[q.Key]]:
			if err := checkAnswer(q.Method, raw); err != nil {
				return nil, invalidAnswer(q.Method, err)
			}
			answers[q.Key] = raw
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
	return answers, nil
}

func questionParams(p any) any {
	if p == nil {
		return jsontext.Value("{}")
	}
	return p
}

// answer delivers the client's answers (tasks/update): "A server SHOULD
// ignore any inputResponses responses mapped to a key that is not
// currently outstanding"; the task stays input_required until every open
// question is answered.
func (t *taskRun) answer(responses map[string]jsontext.Value) {
	t.mu.Lock()
	n := 0
	for k, v := range responses {
		ch, ok := t.waiting[k]
		if !ok {
			continue
		}
		delete(t.waiting, k)
		delete(t.state.InputRequests, k)
		ch <- clone(v)
		n++
	}
	if n > 0 && len(t.waiting) == 0 && t.state.Status == protocol.TaskInputRequired {
		t.state.Status, t.state.InputRequests = protocol.TaskWorking, nil
	}
	t.mu.Unlock()
	if n > 0 {
		t.update()
	}
}

// askLegacy asks 2025-11-25 questions as server-to-client requests tied
// to the task ("The receiver MUST include the
// io.modelcontextprotocol/related-task metadata in the request").
func (t *taskRun) askLegacy(ctx context.Context, qs []Question) (map[string]jsontext.Value, error) {
	t.mu.Lock()
	t.state.Status = protocol.TaskInputRequired
	t.mu.Unlock()
	t.update()
	answers := make(map[string]jsontext.Value, len(qs))
	for _, q := range qs {
		params, err := withRelatedTask(questionParams(q.Params), t.state.ID)
		if err != nil {
			return nil, err
		}
		raw, err := t.req.put(ctx, q.Key, q.Method, params)
		if err != nil {
			return nil, err
		}
		if err := checkAnswer(q.Method, raw); err != nil {
			return nil, invalidAnswer(q.Method, err)
		}
		answers[q.Key] = raw
	}
	t.mu.Lock()
	if t.state.Status == protocol.TaskInputRequired {
		t.state.Status = protocol.TaskWorking
	}
	t.mu.Unlock()
	t.update()
	return answers, nil
}

// withRelatedTask returns params with the related-task _meta added.
func withRelatedTask(params any, id string) (jsontext.Value, error) {
	return editMeta(params, func(meta protocol.Meta) {
		meta[protocol.MetaRelatedTask] = protocol.RelatedTaskMetadata{TaskID: id}
	})
}

// randomID returns 128 random bits in hex: a task's id, a session's name
// as the owner of its tasks.
func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// The owners of tasks, when TaskOptions.Owner does not name them: the
// authenticated caller, else the legacy session.
const (
	callerOwnerPrefix  = "caller:"
	sessionOwnerPrefix = "session:"
)

// taskOwner is the owner of the tasks a request creates and lists.
func (s *Server) taskOwner(ctx context.Context, r *Request) string {
	if f := s.taskMgr().opts.Owner; f != nil {
		return f(ctx, r)
	}
	if c, ok := intercept.CallerFrom(ctx); ok {
		return callerOwnerPrefix + c.ID
	}
	if r.Session != nil {
		return r.Session.owner
	}
	return ""
}

// taskClient names the client of a request for its share of the task
// store: the authenticated caller, else its address, else its session.
func taskClient(ctx context.Context, r *Request) string {
	if c := intercept.ClientKey(ctx, serverapi.RemoteAddrOf(ctx)); c != "" {
		return c
	}
	if r.Session != nil {
		return r.Session.owner
	}
	return ""
}

// reaches reports whether request r may reach task st (get, update,
// cancel, result, listen): a task bound to an authorization context
// (TaskOptions.Owner's, or the authenticated caller's) only by requests of
// that context; any other by its id, which is unguessable: "If
// context-binding is unavailable, receivers MUST generate cryptographically
// secure task IDs".
func (s *Server) reaches(ctx context.Context, r *Request, st *TaskState) bool {
	bound := s.taskMgr().opts.Owner != nil || strings.HasPrefix(st.Owner, callerOwnerPrefix)
	return !bound || st.Owner == s.taskOwner(ctx, r)
}

// wire is what the era shapes need of st.
func (st *TaskState) wire() *taskwire.Record {
	return &taskwire.Record{ID: st.ID, Status: st.Status, StatusMessage: st.StatusMessage,
		CreatedAt: st.CreatedAt, UpdatedAt: st.UpdatedAt, TTL: st.TTL, PollInterval: st.PollInterval,
		Result: st.Result, Error: st.Error, InputRequests: st.InputRequests}
}

// detailed is a task as the extension's tasks/get shows it.
func detailed(st *TaskState) *protocol.DetailedTask { return taskwire.Detailed(st.wire()) }

// legacyTask is a task as 2025-11-25 shows it.
func legacyTask(st *TaskState) protocol.Task { return taskwire.Legacy(st.wire()) }
