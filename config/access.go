package config

// Access is the "access" section of a gateway's configuration: which
// callers may use which tools, prompts and resources, on every endpoint
// (/mcp, /servers/NAME/mcp and the views alike).
//
//	"access": {
//	  "default": "deny",
//	  "rules": [
//	    {"description": "admins use everything",
//	     "allow": {"roles": ["admin"]}, "tools": ["*"], "prompts": ["*"], "resources": ["*"]},
//	    {"description": "support reads tickets",
//	     "allow": {"roles": ["support"], "scopes": ["tickets:read"]}, "tools": ["tickets__get_*", "tickets__search"]},
//	    {"description": "nobody deletes from the gateway",
//	     "deny": {}, "tools": ["*__delete_*"]}
//	  ]
//	}
//
// A rule applies to a tool, prompt or resource its lists match (path.Match
// patterns: a tool or prompt by SERVER__NAME, a view's tool by
// VIEW:NAME too; a resource by its URI), for a caller its "allow" or
// "deny" condition matches. A deny that applies wins over every allow;
// otherwise an allow that applies allows; otherwise Default decides.
type Access struct {
	// Default is what happens when no rule applies: "allow" or "deny"
	// (the default, once an access section is written).
	Default string       `json:"default,omitempty"`
	Rules   []AccessRule `json:"rules"`
}

// AccessRule is one rule: exactly one of Allow and Deny, and what it is
// about. A list left out is not covered by the rule (write ["*"] for
// every item).
type AccessRule struct {
	// Description says what the rule is for; a refusal names it.
	Description string     `json:"description,omitempty"`
	Allow       *Condition `json:"allow,omitempty"`
	Deny        *Condition `json:"deny,omitempty"`
	Tools       []string   `json:"tools,omitempty"`
	Prompts     []string   `json:"prompts,omitempty"`
	Resources   []string   `json:"resources,omitempty"`
}

// Condition says which callers a rule is about: every field written must
// hold, and an empty condition ({}) holds for every caller.
type Condition struct {
	// Callers: the caller is one of these (a token file's caller name,
	// a token's subject, or the caller's ID).
	Callers []string `json:"callers,omitempty"`
	// Roles: the caller holds one of these roles.
	Roles []string `json:"roles,omitempty"`
	// Scopes: the caller's token grants every one of these scopes. A
	// call refused by an allow rule only for want of them is answered
	// 403 insufficient_scope naming them, for the client to step up.
	Scopes []string `json:"scopes,omitempty"`
	// Claims: each named claim of the caller's token has the value (a
	// string, number or boolean) or, for a list, one of the values.
	Claims map[string]any `json:"claims,omitempty"`
}
