//go:build !unix

package streamable

import "net"

// h1Supported is false where an idle connection cannot be checked before
// use: POSTs then go through net/http, which watches its connections.
const h1Supported = false

func connAlive(c net.Conn) bool { return false }
