package stack

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ErrPortInUse means a port asked for explicitly is taken.
var ErrPortInUse = errors.New("port in use")

// Listener is one listening TCP socket of a process.
type Listener struct {
	PID  int    `json:"pid"`
	Addr string `json:"addr"` // ip:port
}

// Listeners returns the listening TCP sockets (IPv4 and IPv6) owned by the
// given processes, read from /proc/net/tcp{,6} and /proc/PID/fd.
func Listeners(pids []int) ([]Listener, error) {
	inodes := map[string]int{} // socket inode → pid
	for _, pid := range pids {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			if err != nil {
				continue
			}
			if ino, ok := strings.CutPrefix(link, "socket:["); ok {
				inodes[strings.TrimSuffix(ino, "]")] = pid
			}
		}
	}
	var out []Listener
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		ls, err := listeningSockets(file)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for _, l := range ls {
			if pid, ok := inodes[l.inode]; ok {
				out = append(out, Listener{PID: pid, Addr: l.addr})
			}
		}
	}
	return out, nil
}

type sock struct{ addr, inode string }

// listeningSockets parses /proc/net/tcp-format files (state 0A = LISTEN).
func listeningSockets(path string) ([]sock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []sock
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 || fs[3] != "0A" {
			continue
		}
		addr, err := decodeAddr(fs[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, sock{addr: addr, inode: fs[9]})
	}
	return out, sc.Err()
}

// decodeAddr turns "0100007F:1F90" into "127.0.0.1:8080". The address is in
// host byte order per 32-bit word (little endian on every supported arch).
func decodeAddr(s string) (string, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return "", fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return "", fmt.Errorf("bad address %q", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return "", fmt.Errorf("bad port %q", s)
	}
	ip := make(net.IP, len(raw))
	for w := 0; w < len(raw); w += 4 {
		ip[w], ip[w+1], ip[w+2], ip[w+3] = raw[w+3], raw[w+2], raw[w+1], raw[w]
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(int(port))), nil
}

// IsLoopback reports whether a listener's address is a loopback address.
func (l Listener) IsLoopback() bool {
	host, _, err := net.SplitHostPort(l.Addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
