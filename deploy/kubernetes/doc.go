// Package kubernetes checks the manifests of ferry.yaml beside it: every
// object decodes strictly into the Kubernetes API's types (a misspelt or
// misplaced field is an error, as kubectl's server-side validation makes
// it), and the objects agree with each other and with ferry serve's
// flags. Run it with GOWORK=off go test (interop's
// TestDeployKubernetesManifests does).
package kubernetes
