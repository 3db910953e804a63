package protocol

import "github.com/go-json-experiment/json/jsontext"

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

// The tasks extension (io.modelcontextprotocol/tasks, SEP-2663), which
// attaches to 2026-07-28: the server decides per request whether a
// tools/call becomes a task, answering with a flat task (resultType
// "task"); tasks/get inlines the result, error or input requests;
// tasks/update delivers input responses; there is no tasks/result nor
// tasks/list.
const (
	// ExtensionTasks names the extension in capabilities.extensions.
	ExtensionTasks = "io.modelcontextprotocol/tasks"
	// ResultTask is the resultType of a CreateTaskResult.
	ResultTask = "task"
	// MethodTasksUpdate delivers input responses to a task.
	MethodTasksUpdate = "tasks/update"
	// NotificationTasks carries a task's state on a subscriptions/listen
	// stream.
	NotificationTasks = "notifications/tasks"
)

// Task support of a tool (ToolExecution.TaskSupport).
const (
	TaskSupportForbidden = "forbidden"
	TaskSupportOptional  = "optional"
	TaskSupportRequired  = "required"
)

// DetailedTask is a task of the extension as the wire carries it: the
// CreateTaskResult of a tools/call (ResultType "task"), the result of
// tasks/get (ResultType "complete") and the params of
// notifications/tasks. Result, Error and InputRequests are set by status.
type DetailedTask struct {
	ResultFields
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is the retention from creation in milliseconds; nil means
	// unlimited and is sent as null.
	TTLMs          *int64                  `json:"ttlMs"`
	PollIntervalMs *int64                  `json:"pollIntervalMs,omitzero"`
	InputRequests  map[string]InputRequest `json:"inputRequests,omitempty"`
	// Result is the request's result, for a completed task.
	Result jsontext.Value `json:"result,omitzero"`
	// Error is the JSON-RPC error object, for a failed task.
	Error jsontext.Value `json:"error,omitzero"`
}

// Terminal reports whether status is completed, failed or cancelled.
func Terminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// UpdateTaskParams are the parameters of tasks/update.
type UpdateTaskParams struct {
	Meta           Meta                      `json:"_meta,omitempty"`
	TaskID         string                    `json:"taskId"`
	InputResponses map[string]jsontext.Value `json:"inputResponses"`
}
