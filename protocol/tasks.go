package protocol

// Task statuses (2025-11-25 experimental tasks; from 2026-07-28 tasks are
// the io.modelcontextprotocol/tasks extension, which these types do not
// model).
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskMetadata asks for task-augmented execution of a request
// (2025-11-25).
type TaskMetadata struct {
	// TTL is the retention asked for, in milliseconds.
	TTL *int64 `json:"ttl,omitzero"`
}

// Task is the state of a task (2025-11-25).
type Task struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is the retention in milliseconds; nil means unlimited and is
	// sent as null.
	TTL          *int64 `json:"ttl"`
	PollInterval *int64 `json:"pollInterval,omitzero"`
}

// RelatedTaskMetadata links a message to a task.
type RelatedTaskMetadata struct {
	TaskID string `json:"taskId"`
}

// CreateTaskResult answers a task-augmented request.
type CreateTaskResult struct {
	ResultFields
	Task Task `json:"task"`
}

// TaskIDParams are the parameters of tasks/get, tasks/result and
// tasks/cancel.
type TaskIDParams struct {
	Meta   Meta   `json:"_meta,omitempty"`
	TaskID string `json:"taskId"`
}

// GetTaskResult is the result of tasks/get and tasks/cancel.
type GetTaskResult struct {
	ResultFields
	Task
}

// ListTasksResult is the result of tasks/list.
type ListTasksResult struct {
	ResultFields
	Tasks      []Task `json:"tasks"`
	NextCursor Cursor `json:"nextCursor,omitempty"`
}

// TaskStatusParams are the parameters of notifications/tasks/status.
type TaskStatusParams struct {
	Meta Meta `json:"_meta,omitempty"`
	Task
}

// ClientTasksCapability says which client requests may run as tasks.
//
// List and Cancel are present-or-absent flags: a non-nil map, even empty,
// is sent (as {}) and declares support for tasks/list or tasks/cancel; nil
// leaves it out. Requests maps request kinds to such flags, as in
// {"sampling": {"createMessage": {}}}.
type ClientTasksCapability struct {
	List     map[string]any `json:"list,omitzero"`
	Cancel   map[string]any `json:"cancel,omitzero"`
	Requests map[string]any `json:"requests,omitzero"`
}

// ServerTasksCapability says which server requests may run as tasks.
//
// List and Cancel are present-or-absent flags, as in
// [ClientTasksCapability]; Requests is, for instance,
// {"tools": {"call": {}}}.
type ServerTasksCapability struct {
	List     map[string]any `json:"list,omitzero"`
	Cancel   map[string]any `json:"cancel,omitzero"`
	Requests map[string]any `json:"requests,omitzero"`
}
