//go:build !linux

package h1

import (
	"io"
	"net"
)

// newRawIO is the connection itself where raw system calls are not used.
func newRawIO(nc net.Conn) io.ReadWriter { return nc }
