package gateway

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ferrymcp/ferry/protocol"
)

// memoryTasks is the in-process [TaskStore] of a gateway without a shared
// one: bounded, each task dropped once its TTL passed.
type memoryTasks struct {
	max   int
	mu    sync.Mutex
	tasks map[string]*TaskRecord
	order []string // ids, oldest first
}

func newMemoryTasks(n int) *memoryTasks {
	if n <= 0 {
		n = 10000
	}
	return &memoryTasks{max: n, tasks: map[string]*TaskRecord{}}
}

func (m *memoryTasks) CreateTask(ctx context.Context, t *TaskRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(time.Now())
	if len(m.tasks) >= m.max {
		return fmt.Errorf("too many tasks: the gateway holds %d, the most it may", m.max)
	}
	c := *t
	m.tasks[t.ID] = &c
	m.order = append(m.order, t.ID)
	return nil
}

func (m *memoryTasks) UpdateTask(ctx context.Context, t *TaskRecord) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.tasks[t.ID]
	if !ok || protocol.Terminal(old.Status) {
		return false, nil
	}
	c := *t
	m.tasks[t.ID] = &c
	return true, nil
}

func (m *memoryTasks) GetTask(ctx context.Context, id string) (*TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok || time.Now().After(t.Expires()) {
		return nil, ErrTaskNotFound
	}
	c := *t
	return &c, nil
}

// ListTasks implements [TaskStore]; the cursor is the id of the page's
// first task.
func (m *memoryTasks) ListTasks(ctx context.Context, owner, cursor string, limit int) ([]*TaskRecord, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(time.Now())
	start := 0
	if cursor != "" {
		if start = slices.Index(m.order, cursor); start < 0 {
			return nil, "", ErrTaskNotFound
		}
	}
	var out []*TaskRecord
	for i := start; i < len(m.order); i++ {
		t := m.tasks[m.order[i]]
		if t.Owner != owner {
			continue
		}
		if len(out) == limit {
			return out, t.ID, nil
		}
		c := *t
		out = append(out, &c)
	}
	return out, "", nil
}

// Beat and Alive: in one process, the replica is this one, alive.
func (m *memoryTasks) Beat(context.Context, string, time.Duration) error { return nil }

func (m *memoryTasks) Alive(context.Context, string) (bool, error) { return true, nil }

// sweep drops the tasks past their TTL.
func (m *memoryTasks) sweep(now time.Time) {
	m.order = slices.DeleteFunc(m.order, func(id string) bool {
		if now.After(m.tasks[id].Expires()) {
			delete(m.tasks, id)
			return true
		}
		return false
	})
}
