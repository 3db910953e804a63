package protocol

// SubscriptionFilter chooses the notifications a subscriptions/listen
// stream carries (2026-07-28).
type SubscriptionFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitzero"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitzero"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitzero"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs asks for notifications/tasks about these tasks (the tasks
	// extension, io.modelcontextprotocol/tasks).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// SubscriptionsListenParams are the parameters of subscriptions/listen.
type SubscriptionsListenParams struct {
	Meta          Meta               `json:"_meta,omitempty"`
	Notifications SubscriptionFilter `json:"notifications"`
}

// SubscriptionsAcknowledgedParams are the parameters of
// notifications/subscriptions/acknowledged.
type SubscriptionsAcknowledgedParams struct {
	Meta          Meta               `json:"_meta,omitempty"`
	Notifications SubscriptionFilter `json:"notifications"`
}

// SubscriptionsListenResult ends a subscription gracefully.
type SubscriptionsListenResult struct {
	ResultFields
}
