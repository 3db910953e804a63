package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/intercept"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// Tasks through the gateway. A client's task-augmented tools/call (a
// 2025-11-25 session's with a task member, a stateless request's whose
// client declares io.modelcontextprotocol/tasks, for a tool that may run
// as a task) becomes a task of the gateway's own: its record is stored,
// the client is answered with it at once, and the replica that took the
// call runs the tool upstream in the background (as a task there when the
// server runs it as one, polling it, else as an ordinary call), writing
// its status and, at the end, its result or error to the record. The
// tasks/* methods are answered from the records, so that with a shared
// store (Redis) any replica answers for any task.
//
// The ids the gateway hands out are 128 random bits naming a record; the
// record, never the client, says which server and which of its tasks it
// is. A task is bound to the caller that created it (the identity
// Options.Auth gives), else to its legacy session; only that caller
// reaches (get, result, cancel, list) it. A stateless task without a
// caller is reached by its id alone, which cannot be guessed.
//
// A replica renews a lease in the shared store while it runs; a task
// whose replica's lease lapsed (the replica died) is failed, with a
// message saying so, by the first replica that reads it.

// TaskOptions configure the tasks the gateway runs for its clients. The
// zero value is usable.
type TaskOptions struct {
	// Store keeps the tasks' records; nil keeps them in the
	// ReplicaOptions.Store when it is a TaskStore too (gateway/shared's
	// Redis store is), else in this process (at most MaxTasks of them,
	// default 10,000). Replicas share one so that any of them answers
	// for any task.
	Store TaskStore
	// MaxTasks bounds the tasks of the in-process store.
	MaxTasks int
	// MaxRunning bounds the tasks this replica runs at once (default
	// 1,000), and a tenth of it those of one owner (a caller, else a
	// legacy session): past either, a task-augmented call fails with an
	// error saying which.
	MaxRunning int
	// TTL is how long a task and its result are kept after its creation
	// when the client asks for nothing shorter (default one hour).
	TTL time.Duration
	// PollInterval is the interval between polls suggested to clients
	// (default one second).
	PollInterval time.Duration
	// Lease is how long a replica's tasks outlive its last sign of life
	// in a shared Store (default 10 seconds; renewed every third of it):
	// a task whose replica died is failed within a lease of its death.
	Lease time.Duration
}

// TaskStore keeps the records of the gateway's tasks. Every record
// expires TTL after its creation. Implementations are safe for
// concurrent use; a write is seen by every read that follows it.
type TaskStore interface {
	// CreateTask stores a new task.
	CreateTask(ctx context.Context, t *TaskRecord) error
	// UpdateTask replaces the record of task t.ID unless it is finished
	// (completed, failed, cancelled) or gone, and reports whether it did:
	// a finished task never changes.
	UpdateTask(ctx context.Context, t *TaskRecord) (bool, error)
	// GetTask returns the record of a task, or [ErrTaskNotFound].
	GetTask(ctx context.Context, id string) (*TaskRecord, error)
	// ListTasks returns the tasks of owner, oldest first, at most limit
	// of them from the opaque cursor on, and the cursor of the next page
	// ("" at the end).
	ListTasks(ctx context.Context, owner, cursor string, limit int) ([]*TaskRecord, string, error)
	// Beat renews the lease of replica for ttl.
	Beat(ctx context.Context, replica string, ttl time.Duration) error
	// Alive reports whether the lease of replica holds.
	Alive(ctx context.Context, replica string) (bool, error)
}

// ErrTaskNotFound is a [TaskStore]'s answer for a task it does not hold
// (never created, or expired).
var ErrTaskNotFound = errors.New("task not found")

// TaskRecord is what the gateway keeps of one task.
type TaskRecord struct {
	ID string `json:"id"`
	// Owner is who reaches the task: "caller:" and the caller, else
	// "session:" and the digest of its legacy session; "" for a stateless
	// task without a caller.
	Owner     string `json:"owner,omitempty"`
	Stateless bool   `json:"stateless,omitempty"`
	// Server and Tool are the upstream's names; UpstreamID is the
	// upstream's id of its task, when it made one.
	Server     string `json:"server"`
	Tool       string `json:"tool"`
	UpstreamID string `json:"upstreamId,omitempty"`
	// Replica names the replica that runs the task.
	Replica       string        `json:"replica"`
	Status        string        `json:"status"`
	StatusMessage string        `json:"statusMessage,omitempty"`
	CreatedAt     time.Time     `json:"createdAt"`
	UpdatedAt     time.Time     `json:"updatedAt"`
	TTL           time.Duration `json:"ttl"`
	PollInterval  time.Duration `json:"pollInterval"`
	// Result is the tools/call result (completed), as the client's era
	// shows it; Error the JSON-RPC error (failed).
	Result jsontext.Value `json:"result,omitzero"`
	Error  *jsonrpc.Error `json:"error,omitempty"`
}

// Expires is when the record expires.
func (t *TaskRecord) Expires() time.Time { return t.CreatedAt.Add(t.TTL) }

// taskManager runs the tasks of this replica and answers for every task.
type taskManager struct {
	g        *Gateway
	opts     TaskOptions
	store    TaskStore
	shared   bool // the store is other replicas' too
	replica  string
	lastBeat atomic.Int64 // Unix ns of the last renewed lease

	mu      sync.Mutex
	runs    map[string]*taskRun
	byOwner map[string]int // running tasks by TaskRecord.Owner
}

// taskRun is a task whose work runs in this replica.
type taskRun struct {
	m      *taskManager
	ctx    context.Context // the work's; cancelled with a cause
	cancel context.CancelCauseFunc
	sess   *server.Session // the legacy session told of its status, or nil
	owner  string          // its record's Owner, counted in byOwner
	done   chan struct{}   // closed once its record is final

	mu   sync.Mutex
	rec  *TaskRecord
	upID string // the server's id of its task, once known
}

func newTaskManager(g *Gateway) *taskManager {
	o := g.opts.Tasks
	if o.TTL <= 0 {
		o.TTL = time.Hour
	}
	if o.PollInterval <= 0 {
		o.PollInterval = time.Second
	}
	if o.Lease <= 0 {
		o.Lease = 10 * time.Second
	}
	if o.MaxRunning <= 0 {
		o.MaxRunning = 1000
	}
	if r := g.opts.Replicas; o.Store == nil && r != nil {
		// A session store that keeps tasks too (gateway/shared's Redis)
		// keeps them for every replica.
		o.Store, _ = r.Store.(TaskStore)
	}
	m := &taskManager{g: g, opts: o, store: o.Store, shared: o.Store != nil, runs: map[string]*taskRun{}, byOwner: map[string]int{}}
	if m.store == nil {
		m.store = newMemoryTasks(o.MaxTasks)
	}
	m.replica = rand.Text()
	if g.opts.Replicas != nil && g.opts.Replicas.Replica != "" {
		m.replica = g.opts.Replicas.Replica
	}
	if m.shared {
		g.wg.Go(m.keepAlive)
	}
	return m
}

// keepAlive renews the replica's lease while it runs tasks, until the
// gateway closes, and stops the work of tasks another replica cancelled.
func (m *taskManager) keepAlive() {
	t := time.NewTicker(m.opts.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-m.g.closing:
			return
		case <-t.C:
		}
		if len(m.running()) == 0 {
			// Only a running task needs the lease (fresh renews it
			// before one starts): an idle replica costs Redis nothing.
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), m.opts.Lease/3)
		m.beat(ctx)
		m.stopCancelled(ctx)
		cancel()
	}
}

// beat renews the lease.
func (m *taskManager) beat(ctx context.Context) error {
	if !m.shared {
		return nil
	}
	if err := m.store.Beat(ctx, m.replica, m.opts.Lease); err != nil {
		m.g.log.Warn("gateway: renewing the tasks' lease failed", "error", err)
		return err
	}
	m.lastBeat.Store(time.Now().UnixNano())
	return nil
}

// fresh makes sure the lease holds for a while before a task is made.
func (m *taskManager) fresh(ctx context.Context) error {
	if !m.shared || time.Since(time.Unix(0, m.lastBeat.Load())) < m.opts.Lease/3 {
		return nil
	}
	return m.beat(ctx)
}

// stopCancelled stops the work of the tasks of this replica that were
// cancelled through another.
func (m *taskManager) stopCancelled(ctx context.Context) {
	for _, r := range m.running() {
		rec, err := m.store.GetTask(ctx, r.id())
		if err == nil && rec.Status == protocol.TaskCancelled || errors.Is(err, ErrTaskNotFound) {
			r.cancel(errTaskCancelled)
		}
	}
}

func (m *taskManager) running() []*taskRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*taskRun, 0, len(m.runs))
	for _, r := range m.runs {
		out = append(out, r)
	}
	return out
}

func (m *taskManager) run(id string) *taskRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs[id]
}

var (
	errTaskCancelled = errors.New("the task was cancelled")
	errTaskClosing   = errors.New("the gateway is shutting down")
)

// taskOwner names who reaches the tasks req creates and lists.
func (g *Gateway) taskOwner(ctx context.Context, req *server.Request) string {
	if c := callerOf(ctx); c != "" {
		return "caller:" + c
	}
	if req.Session != nil {
		return "session:" + g.sessionKey(req.Session)
	}
	return ""
}

// sessionKey names a legacy session the same way on every replica: the
// digest of its id (its sealed id's, when replicas share sessions).
func (g *Gateway) sessionKey(sess *server.Session) string {
	if sh := g.share; sh != nil {
		sh.mu.Lock()
		s := sh.bySess[sess]
		sh.mu.Unlock()
		if s != nil {
			return s.key
		}
	}
	if sess.ID == "" {
		return fmt.Sprintf("local:%p", sess) // no transport id: this process's only
	}
	return storeKey(sess.ID)
}

// taskAsk is what a tools/call asks of a task: nil for an ordinary call.
type taskAsk struct {
	ttl time.Duration
}

// taskWanted reports whether a tools/call is to run as a task. The
// checks that cost nothing come first: an ordinary call pays for none of
// the rest.
func (f *front) taskWanted(ctx context.Context, req *server.Request, name string) (*taskAsk, error) {
	ask, err := taskAsked(req)
	if ask == nil || err != nil {
		return nil, err
	}
	support := f.taskSupport(ctx, req, name)
	switch {
	case support != protocol.TaskSupportForbidden:
		return ask, nil
	case req.Stateless():
		return nil, nil // the server decides: an ordinary call
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "tool %q cannot run as a task", name)
}

// taskAsked reads what a request asks of a task: a stateless client that
// declares the extension allows one; a 2025-11-25 session asks with a
// task member.
func taskAsked(req *server.Request) (*taskAsk, error) {
	if req.Stateless() {
		if _, ok := req.ClientCapabilities.Extensions[protocol.ExtensionTasks]; !ok {
			return nil, nil
		}
		return &taskAsk{}, nil
	}
	if !protocol.AtLeast(req.ProtocolVersion, protocol.Version20251125) {
		return nil, nil
	}
	// The server decoded the task member with the name and the
	// arguments, in the walk it makes anyway.
	p, err := req.ToolCall()
	if err != nil || p.Task == nil {
		return nil, err
	}
	md := p.Task
	ask := &taskAsk{}
	if md.TTL != nil && *md.TTL > 0 {
		ask.ttl = time.Duration(*md.TTL) * time.Millisecond
	}
	return ask, nil
}

// taskSupport is the task support of the endpoint's tool name.
func (f *front) taskSupport(ctx context.Context, req *server.Request, name string) string {
	for i := range f.toolCatalog(ctx, req).items {
		t := &f.toolCatalog(ctx, req).items[i]
		if t.Name != name {
			continue
		}
		if t.Execution == nil || t.Execution.TaskSupport == "" {
			break
		}
		return t.Execution.TaskSupport
	}
	return protocol.TaskSupportForbidden
}

// startTask makes a task of a tools/call of tool r.name on l, and
// answers the call with it.
func (f *front) startTask(ctx context.Context, req *server.Request, p *protocol.CallToolParams, r route, l *link, ask *taskAsk) (intercept.Result, error) {
	m := f.g.tasks
	if err := m.fresh(ctx); err != nil {
		return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInternalError, "creating the task: %v", err)
	}
	ttl := m.opts.TTL
	if ask.ttl > 0 {
		ttl = min(ask.ttl, ttl)
	}
	now := time.Now().UTC()
	rec := &TaskRecord{ID: newTaskID(), Owner: f.g.taskOwner(ctx, req), Stateless: req.Stateless(),
		Server: r.up.name, Tool: r.name, Replica: m.replica, Status: protocol.TaskWorking,
		CreatedAt: now, UpdatedAt: now, TTL: ttl, PollInterval: m.opts.PollInterval}
	run, err := m.begin(rec, req.Session)
	if err != nil {
		return intercept.Result{}, err
	}
	if err := m.store.CreateTask(ctx, rec); err != nil {
		run.end()
		return intercept.Result{}, jsonrpc.NewError(jsonrpc.CodeInternalError, "creating the task: %v", err)
	}
	// The call outlives the request, whose memory the transport reuses.
	params := &protocol.CallToolParams{Name: r.name, Arguments: clone(p.Arguments), Meta: p.Meta}
	m.g.wg.Go(func() { run.work(l, params, ttl) })
	return intercept.Result{Value: taskCreated(rec)}, nil
}

func clone(v jsontext.Value) jsontext.Value {
	if v == nil {
		return nil
	}
	return append(jsontext.Value(nil), v...)
}

func newTaskID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// begin registers the run of a new task, within the bounds of
// MaxRunning; it is cancelled when the gateway closes.
func (m *taskManager) begin(rec *TaskRecord, sess *server.Session) (*taskRun, error) {
	m.mu.Lock()
	share := max(m.opts.MaxRunning/10, 1)
	switch {
	case len(m.runs) >= m.opts.MaxRunning:
		m.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "too many tasks: this gateway runs %d, the most it may", len(m.runs))
	case rec.Owner != "" && m.byOwner[rec.Owner] >= share:
		m.mu.Unlock()
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "too many tasks: you have %d running, the most one client may", share)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	r := &taskRun{m: m, ctx: ctx, rec: rec, owner: rec.Owner, cancel: cancel, sess: sess, done: make(chan struct{})}
	m.runs[rec.ID] = r
	m.byOwner[rec.Owner]++
	m.mu.Unlock()
	m.g.wg.Go(func() {
		select {
		case <-m.g.closing:
			cancel(errTaskClosing)
		case <-r.done:
		}
	})
	return r, nil
}

// tasksCapability is what a 2025-11-25 session is told of tasks: any
// tool call the tool allows may run as one, listed and cancelled.
func tasksCapability() *protocol.ServerTasksCapability {
	return &protocol.ServerTasksCapability{List: map[string]any{}, Cancel: map[string]any{},
		Requests: map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
}
