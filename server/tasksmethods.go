package server

import (
	"context"
	"errors"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
)

// tasksMethod serves the tasks/* methods, each era its own: the
// extension's tasks/get, tasks/update and tasks/cancel for stateless
// requests (tasks/result and tasks/list are not part of it: -32601), and
// 2025-11-25's tasks/get, tasks/result, tasks/list and tasks/cancel in
// sessions of that revision.
func (s *Server) tasksMethod(ctx context.Context, r *Request, params jsontext.Value) (any, error) {
	if r.stateless {
		switch r.Method {
		case protocol.MethodTasksGet, protocol.MethodTasksUpdate, protocol.MethodTasksCancel:
		default:
			return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s (not part of the tasks extension)", r.Method)
		}
		if !acceptsTasks(&r.ClientCapabilities) {
			return nil, missingTasksExtension()
		}
	} else if !protocol.AtLeast(r.ProtocolVersion, protocol.Version20251125) || r.Method == protocol.MethodTasksUpdate {
		return nil, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s", r.Method)
	}
	if r.Method == protocol.MethodTasksList {
		return s.listTasks(ctx, r, params)
	}
	var p protocol.UpdateTaskParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	st, err := s.task(ctx, p.TaskID, r.stateless)
	if err != nil {
		return nil, err
	}
	if !s.reaches(ctx, r, st) {
		// Another caller's task is as good as unknown.
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	switch r.Method {
	case protocol.MethodTasksGet:
		if r.stateless {
			d := detailed(st)
			d.ResultType = protocol.ResultComplete
			return d, nil
		}
		return &protocol.GetTaskResult{Task: legacyTask(st)}, nil
	case protocol.MethodTasksUpdate:
		if run := s.taskMgr().run(st.ID); run != nil {
			run.answer(p.InputResponses)
		}
		return &protocol.EmptyResult{}, nil
	case protocol.MethodTasksCancel:
		return s.cancelTask(ctx, r, st)
	}
	return s.taskResult(ctx, st)
}

// task returns the state of task id of the era asked: "Invalid or
// nonexistent taskId ... -32602".
func (s *Server) task(ctx context.Context, id string, stateless bool) (*TaskState, error) {
	if id == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing taskId")
	}
	st, err := s.taskMgr().opts.Store.Get(ctx, id)
	if errors.Is(err, ErrTaskNotFound) || err == nil && st.Stateless != stateless {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Failed to retrieve task: %v", err)
	}
	return st, nil
}

func (m *taskManager) run(id string) *taskRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs[id]
}

// cancelTask cancels a task. The extension acknowledges every
// cancellation, of a finished task too; 2025-11-25 "MUST reject
// cancellation requests for tasks already in a terminal status" and
// "MUST transition the task to cancelled status before sending the
// response".
func (s *Server) cancelTask(ctx context.Context, r *Request, st *TaskState) (any, error) {
	run := s.taskMgr().run(st.ID)
	if protocol.Terminal(st.Status) || run == nil {
		if r.stateless {
			return &protocol.EmptyResult{}, nil
		}
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Cannot cancel task: already in terminal status '%s'", st.Status)
	}
	run.settle(protocol.TaskCancelled, "The task was cancelled by request.", nil, nil)
	run.cancel(errTaskCancelled)
	if r.stateless {
		return &protocol.EmptyResult{}, nil
	}
	st, err := s.task(ctx, st.ID, false)
	if err != nil {
		return nil, err
	}
	return &protocol.GetTaskResult{Task: legacyTask(st)}, nil
}

// taskResult is 2025-11-25's tasks/result: it waits for the task to end
// and returns "exactly what the underlying request would have returned",
// with the related-task _meta.
func (s *Server) taskResult(ctx context.Context, st *TaskState) (any, error) {
	if run := s.taskMgr().run(st.ID); run != nil {
		select {
		case <-run.done:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
		var err error
		if st, err = s.task(ctx, st.ID, false); err != nil {
			return nil, err
		}
	}
	switch st.Status {
	case protocol.TaskCompleted:
		return &relatedResult{raw: st.Result, id: st.ID}, nil
	case protocol.TaskFailed:
		if st.Error != nil {
			return nil, st.Error
		}
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the task ended with status %s and has no result", st.Status)
}

// relatedResult is a stored result sent with the related-task _meta
// added.
type relatedResult struct {
	raw jsontext.Value
	id  string
}

func (r *relatedResult) MarshalJSON() ([]byte, error) {
	return withRelatedTask(r.raw, r.id)
}

// listTasks is 2025-11-25's tasks/list: the tasks of the session.
func (s *Server) listTasks(ctx context.Context, r *Request, params jsontext.Value) (any, error) {
	var p protocol.PaginatedParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	owner := s.taskOwner(ctx, r)
	if owner == "" {
		return &protocol.ListTasksResult{Tasks: []protocol.Task{}}, nil
	}
	sts, next, err := s.taskMgr().opts.Store.List(ctx, owner, p.Cursor, s.opts.PageSize)
	if errors.Is(err, ErrTaskNotFound) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor")
	}
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "listing tasks: %v", err)
	}
	res := &protocol.ListTasksResult{Tasks: make([]protocol.Task, len(sts)), NextCursor: next}
	for i, st := range sts {
		res.Tasks[i] = legacyTask(st)
	}
	return res, nil
}

// taskCapabilities adds what the server offers for tasks to c, for
// revision v, when a tool can run as a task.
func (s *Server) taskCapabilities(c *protocol.ServerCapabilities, v string) {
	if !s.hasTaskTools() {
		return
	}
	if protocol.IsStateless(v) {
		ext := make(map[string]any, len(c.Extensions)+1)
		for k, x := range c.Extensions {
			ext[k] = x
		}
		ext[protocol.ExtensionTasks] = map[string]any{}
		c.Extensions = ext
		return
	}
	if c.Tasks == nil && protocol.AtLeast(v, protocol.Version20251125) {
		c.Tasks = &protocol.ServerTasksCapability{List: map[string]any{}, Cancel: map[string]any{},
			Requests: map[string]any{"tools": map[string]any{"call": map[string]any{}}}}
	}
}

func (s *Server) hasTaskTools() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.tools.all() {
		if toolTaskSupport(&e.tool) != protocol.TaskSupportForbidden {
			return true
		}
	}
	return false
}

// checkListenTasks keeps, of the tasks a subscriptions/listen stream asks
// about, those the caller can reach: "If a client requests task status
// notifications but does not declare the io.modelcontextprotocol/tasks
// extension capability, the server MUST return a JSON-RPC error".
func (s *Server) checkListenTasks(ctx context.Context, r *Request, f *protocol.SubscriptionFilter) error {
	if len(f.TaskIDs) == 0 {
		return nil
	}
	if !acceptsTasks(&r.ClientCapabilities) {
		return missingTasksExtension()
	}
	if len(f.TaskIDs) > s.opts.MaxSubscriptions {
		return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "%d tasks to listen to: the limit is %d", len(f.TaskIDs), s.opts.MaxSubscriptions)
	}
	var ids []string
	for _, id := range f.TaskIDs {
		st, err := s.task(ctx, id, true)
		if err != nil || !s.reaches(ctx, r, st) {
			continue // acknowledged without it
		}
		ids = append(ids, id)
	}
	f.TaskIDs = ids
	return nil
}

// notifyTask sends notifications/tasks, the task as tasks/get shows it,
// to the listen streams that asked about it.
func (s *Server) notifyTask(st *TaskState) {
	s.mu.RLock()
	var listeners []*listener
	for l := range s.listeners {
		if l.wants(protocol.NotificationTasks, st.ID) {
			listeners = append(listeners, l)
		}
	}
	s.mu.RUnlock()
	for _, l := range listeners {
		d := detailed(st)
		d.Meta = l.meta()
		ctx, cancel := context.WithTimeout(l.ctx, notifyTimeout)
		l.peer.Notify(ctx, protocol.NotificationTasks, d)
		cancel()
	}
}
