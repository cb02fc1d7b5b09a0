//go:build !linux

package h1

import "net"

// newWire is the connection itself where raw system calls are not used.
func newWire(nc net.Conn) wire { return &plainWire{Conn: nc} }
