package server

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// ErrTaskNotFound is returned by a [TaskStore] for a task it does not
// hold (never created, or expired and deleted).
var ErrTaskNotFound = errors.New("task not found")

// ErrTaskStoreFull is returned by a [TaskStore] that cannot take another
// task.
var ErrTaskStoreFull = errors.New("too many tasks")

// TaskState is the stored state of one task: what tasks/get, tasks/result
// and tasks/list answer from. The work itself runs in the server that
// created the task.
type TaskState struct {
	ID string
	// Owner is who may list the task: TaskOptions.Owner's name of its
	// creator, else the authenticated caller (who alone reaches it), else
	// a legacy session; "" for tasks of stateless requests without an
	// authenticated caller, which only their id reaches.
	Owner string
	// Client is who created the task, for the share of the store one
	// client may hold: the authenticated caller, else the client's
	// address (HTTP), else its legacy session; "" when none is known (a
	// stateless request on a stream).
	Client string
	// Stateless is true for a task of the tasks extension (2026-07-28),
	// false for an experimental task of 2025-11-25.
	Stateless     bool
	Status        string
	StatusMessage string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// TTL is how long after CreatedAt the task is kept; zero means
	// unlimited.
	TTL          time.Duration
	PollInterval time.Duration
	// Result is the request's result (status completed); Error its
	// JSON-RPC error (status failed).
	Result jsontext.Value
	Error  *jsonrpc.Error
	// InputRequests are the questions the task waits for (status
	// input_required), by key.
	InputRequests map[string]protocol.InputRequest
}

// expired reports whether the task's TTL has passed at now.
func (t *TaskState) expired(now time.Time) bool {
	return t.TTL > 0 && now.After(t.CreatedAt.Add(t.TTL))
}

// clone copies the state, so that a store never shares it with its
// callers.
func (t *TaskState) clone() *TaskState {
	c := *t
	if t.InputRequests != nil {
		c.InputRequests = make(map[string]protocol.InputRequest, len(t.InputRequests))
		for k, v := range t.InputRequests {
			c.InputRequests[k] = v
		}
	}
	return &c
}

// TaskStore keeps the state of tasks. [NewMemoryTaskStore] is the
// default; a program that runs several server instances behind one
// address can keep task state in a shared store instead (the work of a
// task still runs in the instance that created it, so requests for it
// must reach that instance: the Mcp-Name header carries the task id for
// load balancers to route by). Implementations must be safe for
// concurrent use, and Put must not return before a Get of the same id
// would see the state: the server answers with a task only once it is
// stored.
type TaskStore interface {
	// Put creates or replaces the state of task t.ID.
	Put(ctx context.Context, t *TaskState) error
	// Get returns the state of the task, or ErrTaskNotFound.
	Get(ctx context.Context, id string) (*TaskState, error)
	// List returns the tasks of owner, oldest first, at most limit of
	// them from the opaque cursor on, and the cursor of the next page
	// ("" at the end).
	List(ctx context.Context, owner, cursor string, limit int) ([]*TaskState, string, error)
}

// MemoryTaskStore is a bounded in-memory [TaskStore]. Tasks past their
// TTL are dropped as the store is used. One client (TaskState.Client)
// holds at most a share of the store: past it, or when the store is full,
// the client's own oldest finished task makes room, and when every task
// of the client is still running Put returns ErrTaskStoreFull. Another
// client's task is never dropped before its TTL, so that no client can
// fill the store for the others or drop results they have not read.
type MemoryTaskStore struct {
	max       int
	perClient int // tasks of one client (TaskState.Client); "" is not bounded apart
	mu        sync.Mutex
	tasks     map[string]*TaskState
	order     []string       // ids, oldest first
	byClient  map[string]int // the number of tasks of each client
}

// NewMemoryTaskStore returns a store of at most n tasks (10,000 when
// n <= 0), at most a tenth of them (at least one) of one client.
func NewMemoryTaskStore(n int) *MemoryTaskStore {
	if n <= 0 {
		n = 10000
	}
	return &MemoryTaskStore{max: n, perClient: max(1, n/10), tasks: map[string]*TaskState{}, byClient: map[string]int{}}
}

// Put implements [TaskStore].
func (m *MemoryTaskStore) Put(ctx context.Context, t *TaskState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.tasks[t.ID]; ok {
		m.tasks[t.ID] = t.clone()
		return nil
	}
	m.sweep(time.Now())
	if err := m.makeRoom(t.Client); err != nil {
		return err
	}
	m.tasks[t.ID] = t.clone()
	m.order = append(m.order, t.ID)
	m.byClient[t.Client]++
	return nil
}

// makeRoom makes room for a new task of client, dropping a finished task
// of its own if the client holds its share or the store is full.
func (m *MemoryTaskStore) makeRoom(client string) error {
	if client != "" && m.byClient[client] >= m.perClient {
		if !m.evictFinished(client) {
			return fmt.Errorf("%w: this client holds %d tasks that are running or unread, the most one client may", ErrTaskStoreFull, m.perClient)
		}
		return nil
	}
	if len(m.tasks) >= m.max && !m.evictFinished(client) {
		return fmt.Errorf("%w: the server holds %d tasks, the most it may", ErrTaskStoreFull, m.max)
	}
	return nil
}

// Get implements [TaskStore].
func (m *MemoryTaskStore) Get(ctx context.Context, id string) (*TaskState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok || t.expired(time.Now()) {
		return nil, ErrTaskNotFound
	}
	return t.clone(), nil
}

// List implements [TaskStore]. The cursor is the id of the last task of
// the previous page.
func (m *MemoryTaskStore) List(ctx context.Context, owner, cursor string, limit int) ([]*TaskState, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(time.Now())
	start := 0
	if cursor != "" {
		i := slices.Index(m.order, cursor)
		if i < 0 {
			return nil, "", ErrTaskNotFound
		}
		start = i + 1
	}
	var out []*TaskState
	for i := start; i < len(m.order); i++ {
		t := m.tasks[m.order[i]]
		if t.Owner != owner {
			continue
		}
		if len(out) == limit {
			return out, out[len(out)-1].ID, nil
		}
		out = append(out, t.clone())
	}
	return out, "", nil
}

// sweep drops expired tasks.
func (m *MemoryTaskStore) sweep(now time.Time) {
	m.order = slices.DeleteFunc(m.order, func(id string) bool {
		if t := m.tasks[id]; t.expired(now) {
			m.drop(t)
			return true
		}
		return false
	})
}

// evictFinished drops the oldest task of client in a terminal status.
func (m *MemoryTaskStore) evictFinished(client string) bool {
	for i, id := range m.order {
		if t := m.tasks[id]; t.Client == client && protocol.Terminal(t.Status) {
			m.drop(t)
			m.order = slices.Delete(m.order, i, i+1)
			return true
		}
	}
	return false
}

// drop forgets task t; callers remove it from m.order.
func (m *MemoryTaskStore) drop(t *TaskState) {
	delete(m.tasks, t.ID)
	if m.byClient[t.Client]--; m.byClient[t.Client] == 0 {
		delete(m.byClient, t.Client)
	}
}
