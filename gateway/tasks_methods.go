package gateway

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/ferrymcp/ferry/internal/taskwire"
	"github.com/ferrymcp/ferry/jsonrpc"
	"github.com/ferrymcp/ferry/protocol"
	"github.com/ferrymcp/ferry/server"
)

// isTasksMethod reports whether method is one of the tasks/* methods the
// gateway answers.
func isTasksMethod(method string) bool {
	switch method {
	case protocol.MethodTasksGet, protocol.MethodTasksResult, protocol.MethodTasksList,
		protocol.MethodTasksCancel, protocol.MethodTasksUpdate:
		return true
	}
	return false
}

// tasksMethod answers a tasks/* request from the task records, each era
// its own: the extension's tasks/get, tasks/update and tasks/cancel for
// stateless requests, 2025-11-25's tasks/get, tasks/result, tasks/list and
// tasks/cancel in sessions of that revision.
func (f *front) tasksMethod(ctx context.Context, req *server.Request) (any, error) {
	if err := tasksEra(req); err != nil {
		return nil, err
	}
	m := f.g.tasks
	if req.Method == protocol.MethodTasksList {
		return m.list(ctx, req)
	}
	var p protocol.TaskIDParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	rec, err := m.reach(ctx, req, p.TaskID)
	if err != nil {
		return nil, err
	}
	switch req.Method {
	case protocol.MethodTasksGet:
		if req.Stateless() {
			d := detailedTask(rec)
			d.ResultType = protocol.ResultComplete
			return d, nil
		}
		return &protocol.GetTaskResult{Task: legacyTask(rec)}, nil
	case protocol.MethodTasksUpdate:
		// The task's questions are not passed on (noClient): there is
		// nothing to answer, and "unknown keys" are ignored.
		return &protocol.EmptyResult{}, nil
	case protocol.MethodTasksCancel:
		return m.cancelTask(ctx, req, rec)
	}
	return m.result(ctx, req, rec)
}

// tasksEra refuses a tasks/* method the request's era has not.
func tasksEra(req *server.Request) error {
	if req.Stateless() {
		switch req.Method {
		case protocol.MethodTasksResult, protocol.MethodTasksList:
			return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s (not part of the tasks extension)", req.Method)
		}
		if _, ok := req.ClientCapabilities.Extensions[protocol.ExtensionTasks]; !ok {
			return missingTasksExtension()
		}
		return nil
	}
	if !protocol.AtLeast(req.ProtocolVersion, protocol.Version20251125) || req.Method == protocol.MethodTasksUpdate {
		return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "method not found: %s", req.Method)
	}
	return nil
}

// missingTasksExtension is the error for a request that needs the
// extension (-32021, as package server answers).
func missingTasksExtension() error {
	need := protocol.ClientCapabilities{Extensions: map[string]any{protocol.ExtensionTasks: map[string]any{}}}
	data, _ := json.Marshal(&protocol.MissingRequiredClientCapabilityData{RequiredCapabilities: need})
	return &jsonrpc.Error{Code: protocol.CodeMissingRequiredClientCapability, Message: "Missing required client capability", Data: data}
}

// errNoTask is the answer for a task the caller cannot reach: unknown,
// expired, of the other era, or another caller's, all alike.
func errNoTask() error {
	return jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
}

// reach returns the record of task id for req's caller.
func (m *taskManager) reach(ctx context.Context, req *server.Request, id string) (*TaskRecord, error) {
	if id == "" {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing taskId")
	}
	rec, err := m.store.GetTask(ctx, id)
	if errors.Is(err, ErrTaskNotFound) {
		return nil, errNoTask()
	}
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "Failed to retrieve task: %v", err)
	}
	if rec.Stateless != req.Stateless() || rec.Owner != "" && rec.Owner != m.g.taskOwner(ctx, req) {
		return nil, errNoTask()
	}
	return m.settleLost(ctx, rec), nil
}

// settleLost fails a task whose replica is gone: its work, and the
// result it would have had, went with it.
func (m *taskManager) settleLost(ctx context.Context, rec *TaskRecord) *TaskRecord {
	if protocol.Terminal(rec.Status) || !m.lost(ctx, rec) {
		return rec
	}
	lost := *rec
	fail(&lost, jsonrpc.NewError(jsonrpc.CodeInternalError, "the gateway replica %s that ran this task stopped before it ended: the task is lost", rec.Replica))
	lost.UpdatedAt = time.Now().UTC()
	if ok, err := m.store.UpdateTask(ctx, &lost); err != nil || ok {
		return &lost
	}
	if now, err := m.store.GetTask(ctx, rec.ID); err == nil {
		return now // it ended meanwhile
	}
	return &lost
}

// lost reports whether the replica running an unfinished task is gone.
func (m *taskManager) lost(ctx context.Context, rec *TaskRecord) bool {
	if rec.Replica == m.replica {
		return m.run(rec.ID) == nil
	}
	if !m.shared {
		return false
	}
	alive, err := m.store.Alive(ctx, rec.Replica)
	return err == nil && !alive
}

// cancelTask cancels a task. The extension acknowledges every
// cancellation; 2025-11-25 refuses it for a finished task, and answers
// with the task, cancelled.
func (m *taskManager) cancelTask(ctx context.Context, req *server.Request, rec *TaskRecord) (any, error) {
	if !protocol.Terminal(rec.Status) {
		c := *rec
		c.Status, c.StatusMessage, c.UpdatedAt = protocol.TaskCancelled, "The task was cancelled by request.", time.Now().UTC()
		ok, err := m.store.UpdateTask(ctx, &c)
		if err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "cancelling the task: %v", err)
		}
		if ok {
			if run := m.run(rec.ID); run != nil {
				run.cancel(errTaskCancelled) // another replica's stops at its next beat
			}
			rec = &c
		} else if rec, err = m.reach(ctx, req, rec.ID); err != nil {
			return nil, err
		}
	}
	switch {
	case req.Stateless():
		return &protocol.EmptyResult{}, nil
	case rec.Status != protocol.TaskCancelled:
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "Cannot cancel task: already in terminal status '%s'", rec.Status)
	}
	return &protocol.GetTaskResult{Task: legacyTask(rec)}, nil
}

// result is 2025-11-25's tasks/result: it waits for the task to end and
// returns what the call would have returned, with the related-task _meta.
func (m *taskManager) result(ctx context.Context, req *server.Request, rec *TaskRecord) (any, error) {
	for !protocol.Terminal(rec.Status) {
		if err := m.waitChange(ctx, rec); err != nil {
			return nil, err
		}
		var err error
		if rec, err = m.reach(ctx, req, rec.ID); err != nil {
			return nil, err
		}
	}
	switch rec.Status {
	case protocol.TaskCompleted:
		res := &protocol.CallToolResult{}
		if err := json.Unmarshal(rec.Result, res); err != nil {
			return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the task's result: %v", err)
		}
		res.Meta = maps.Clone(res.Meta)
		if res.Meta == nil {
			res.Meta = protocol.Meta{}
		}
		res.Meta[protocol.MetaRelatedTask] = protocol.RelatedTaskMetadata{TaskID: rec.ID}
		return res, nil
	case protocol.TaskFailed:
		if rec.Error != nil {
			return nil, rec.Error
		}
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "the task ended with status %s and has no result", rec.Status)
}

// waitChange waits for task rec to end: on this replica for its run, on
// another by polling its record.
func (m *taskManager) waitChange(ctx context.Context, rec *TaskRecord) error {
	var done <-chan struct{}
	if run := m.run(rec.ID); run != nil {
		done = run.done
	}
	t := time.NewTimer(rec.PollInterval)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	return nil
}

// list is 2025-11-25's tasks/list: the tasks of the caller, else of the
// session.
func (m *taskManager) list(ctx context.Context, req *server.Request) (any, error) {
	var p protocol.PaginatedParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	recs, next, err := m.store.ListTasks(ctx, m.g.taskOwner(ctx, req), p.Cursor, m.g.opts.PageSize)
	if errors.Is(err, ErrTaskNotFound) {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid cursor")
	}
	if err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInternalError, "listing tasks: %v", err)
	}
	res := &protocol.ListTasksResult{Tasks: make([]protocol.Task, 0, len(recs)), NextCursor: protocol.Cursor(next)}
	for _, rec := range recs {
		if !rec.Stateless {
			res.Tasks = append(res.Tasks, legacyTask(m.settleLost(ctx, rec)))
		}
	}
	return res, nil
}

// taskCreated is the answer to the call that made the task.
func taskCreated(rec *TaskRecord) any {
	if rec.Stateless {
		d := detailedTask(rec)
		d.ResultType = protocol.ResultTask
		return d
	}
	return &protocol.CreateTaskResult{Task: legacyTask(rec)}
}

// wire is what the era shapes need of rec.
func (rec *TaskRecord) wire() *taskwire.Record {
	return &taskwire.Record{ID: rec.ID, Status: rec.Status, StatusMessage: rec.StatusMessage,
		CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt, TTL: rec.TTL, PollInterval: rec.PollInterval,
		Result: rec.Result, Error: rec.Error}
}

// detailedTask is a task as the extension shows it.
func detailedTask(rec *TaskRecord) *protocol.DetailedTask { return taskwire.Detailed(rec.wire()) }

// legacyTask is a task as 2025-11-25 shows it.
func legacyTask(rec *TaskRecord) protocol.Task { return taskwire.Legacy(rec.wire()) }
