package protocol

// Root is a directory or file the client lets the server work in.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Meta  Meta   `json:"_meta,omitempty"`
	Roots []Root `json:"roots"`
}
