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
// one: bounded, each task dropped once its TTL passed. One owner holds at
// most a tenth of it: past that, or when the store is full, the owner's
// own oldest finished task makes room, and when every task of the owner
// still runs, creating one fails. Another owner's task is never dropped
// before its TTL, so that no client can fill the store for the others or
// drop results they have not read.
type memoryTasks struct {
	max, share int
	mu         sync.Mutex
	tasks      map[string]*TaskRecord
	order      []string       // ids, oldest first
	byOwner    map[string]int // tasks held by each owner
}

func newMemoryTasks(n int) *memoryTasks {
	if n <= 0 {
		n = 10000
	}
	return &memoryTasks{max: n, share: max(n/10, 1), tasks: map[string]*TaskRecord{}, byOwner: map[string]int{}}
}

func (m *memoryTasks) CreateTask(ctx context.Context, t *TaskRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(time.Now())
	if err := m.makeRoom(t.Owner); err != nil {
		return err
	}
	c := *t
	m.tasks[t.ID] = &c
	m.order = append(m.order, t.ID)
	m.byOwner[t.Owner]++
	return nil
}

// makeRoom makes room for a task of owner, dropping the owner's oldest
// finished task if it holds its share or the store is full.
func (m *memoryTasks) makeRoom(owner string) error {
	switch {
	case m.byOwner[owner] >= m.share:
		if !m.dropFinished(owner) {
			return fmt.Errorf("too many tasks: you hold %d running, the most one client may", m.share)
		}
	case len(m.tasks) >= m.max:
		if !m.dropFinished(owner) {
			return fmt.Errorf("too many tasks: the gateway holds %d, the most it may", m.max)
		}
	}
	return nil
}

// dropFinished drops owner's oldest finished task, if it has one.
func (m *memoryTasks) dropFinished(owner string) bool {
	for i, id := range m.order {
		if t := m.tasks[id]; t.Owner == owner && protocol.Terminal(t.Status) {
			m.drop(id)
			m.order = slices.Delete(m.order, i, i+1)
			return true
		}
	}
	return false
}

// drop forgets task id, but not its place in order.
func (m *memoryTasks) drop(id string) {
	owner := m.tasks[id].Owner
	delete(m.tasks, id)
	if m.byOwner[owner]--; m.byOwner[owner] <= 0 {
		delete(m.byOwner, owner)
	}
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
			m.drop(id)
			return true
		}
		return false
	})
}
