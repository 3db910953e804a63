package protocol

import "github.com/ferrymcp/ferry/internal/jsonrpcapi"

// Method names.
const (
	MethodInitialize             = "initialize"
	MethodPing                   = "ping"
	MethodDiscover               = "server/discover"
	MethodToolsList              = "tools/list"
	MethodToolsCall              = "tools/call"
	MethodResourcesList          = "resources/list"
	MethodResourcesRead          = "resources/read"
	MethodResourcesTemplatesList = "resources/templates/list"
	MethodResourcesSubscribe     = "resources/subscribe"
	MethodResourcesUnsubscribe   = "resources/unsubscribe"
	MethodPromptsList            = "prompts/list"
	MethodPromptsGet             = "prompts/get"
	MethodComplete               = "completion/complete"
	MethodSetLevel               = "logging/setLevel"
	MethodSubscriptionsListen    = "subscriptions/listen"
	MethodCreateMessage          = "sampling/createMessage"
	MethodElicit                 = "elicitation/create"
	MethodListRoots              = "roots/list"
	MethodTasksGet               = "tasks/get"
	MethodTasksResult            = "tasks/result"
	MethodTasksList              = "tasks/list"
	MethodTasksCancel            = "tasks/cancel"

	NotificationInitialized               = "notifications/initialized"
	NotificationCancelled                 = "notifications/cancelled"
	NotificationProgress                  = "notifications/progress"
	NotificationMessage                   = "notifications/message"
	NotificationToolsListChanged          = "notifications/tools/list_changed"
	NotificationResourcesListChanged      = "notifications/resources/list_changed"
	NotificationResourceUpdated           = "notifications/resources/updated"
	NotificationPromptsListChanged        = "notifications/prompts/list_changed"
	NotificationRootsListChanged          = "notifications/roots/list_changed"
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
	NotificationElicitationComplete       = "notifications/elicitation/complete"
	NotificationTaskStatus                = "notifications/tasks/status"
)

// methodNames lists every method name above (a test checks that none is
// missing), for the JSON-RPC decoder to intern.
var methodNames = []string{
	MethodInitialize, MethodPing, MethodDiscover, MethodToolsList, MethodToolsCall,
	MethodResourcesList, MethodResourcesRead, MethodResourcesTemplatesList,
	MethodResourcesSubscribe, MethodResourcesUnsubscribe, MethodPromptsList,
	MethodPromptsGet, MethodComplete, MethodSetLevel, MethodSubscriptionsListen,
	MethodCreateMessage, MethodElicit, MethodListRoots, MethodTasksGet,
	MethodTasksResult, MethodTasksList, MethodTasksCancel,
	NotificationInitialized, NotificationCancelled, NotificationProgress,
	NotificationMessage, NotificationToolsListChanged,
	NotificationResourcesListChanged, NotificationResourceUpdated,
	NotificationPromptsListChanged, NotificationRootsListChanged,
	NotificationSubscriptionsAcknowledged, NotificationElicitationComplete,
	NotificationTaskStatus,
}

// init has the JSON-RPC decoder return MCP's method names without
// allocating a string per message, and pick out of each request's params
// what the MCP layers look at first (its _meta's progress token and
// protocol version, a tool call's name and arguments) in the pass that
// validates them.
func init() {
	jsonrpcapi.InternMethods(methodNames)
	jsonrpcapi.Sniff(jsonrpcapi.SniffNames{Meta: "_meta", ProgressToken: "progressToken",
		ProtocolVersion: MetaProtocolVersion, Name: "name", Arguments: "arguments", ResultType: "resultType",
		IsError: "isError"})
}
