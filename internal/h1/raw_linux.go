package h1

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a non-blocking socket with raw system calls,
// waiting through the runtime's network poller when it would block.
// Unlike net.Conn's Read and Write it does not enter the scheduler's
// syscall state, which for these short calls only costs time and wakes
// the runtime's monitor thread: on a small box that thread's wake-ups
// were a third of the load generator's context switches.
//
// Writes are held back until the next Read (up to maxPending bytes): the
// request then goes out inside the Read's wait for the socket to become
// readable, so the first read system call is made once the answer has
// arrived, instead of once in vain (EAGAIN) right after the write. A
// client that writes a request always reads its answer next.
type rawIO struct {
	rc   syscall.RawConn
	pend []byte // written, not yet sent
	n    int64  // bytes sent

	// One Read's state, for readStep.
	readFn func(fd uintptr) bool // r.readStep
	rp     []byte
	rn     int
	rsent  int // of pend
	errno  syscall.Errno
	wrote  bool // errno is the write's
}

var _ holder = (*rawIO)(nil)

// maxPending bounds the bytes Write holds back; larger writes go out at
// once.
const maxPending = 16 << 10

func newWire(nc net.Conn) wire {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return &plainWire{Conn: nc}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return &plainWire{Conn: nc}
	}
	r := &rawIO{rc: rc}
	r.readFn = r.readStep
	return r
}

func (r *rawIO) sent() int64 { return r.n }

// alive peeks at the idle socket without waiting: nothing to read
// (EAGAIN) means open; an end of stream, an error or bytes the server
// sent unasked (such as a 408 before it closes) mean unusable.
func (r *rawIO) alive() bool {
	var b [1]byte
	ok := false
	err := r.rc.Control(func(fd uintptr) {
		for {
			_, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
				syscall.MSG_PEEK|syscall.MSG_DONTWAIT, 0, 0)
			if e == syscall.EINTR {
				continue
			}
			ok = e == syscall.EAGAIN
			return
		}
	})
	return err == nil && ok
}

func (r *rawIO) dropHeld() { r.pend = r.pend[:0] }

// sendHeld makes one attempt to send the bytes held back, without
// waiting and whatever the socket's deadline: a connection being closed
// sends its last words (a TLS close_notify) as far as the socket takes
// them.
func (r *rawIO) sendHeld() {
	if len(r.pend) == 0 {
		return
	}
	p := r.pend
	r.rc.Control(func(fd uintptr) {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			if e == 0 {
				r.n += int64(m)
			}
			if e != syscall.EINTR {
				return
			}
		}
	})
	r.pend = r.pend[:0]
}

func (r *rawIO) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	// The step's state lives in r and the step is bound once (readFn): a
	// closure here would cost three allocations per read.
	r.rp, r.rn, r.rsent, r.errno, r.wrote = p, 0, 0, 0, false
	// rc.Read arms the readiness notification before it first calls the
	// function, so an answer arriving after the write in readStep wakes
	// the wait that follows it.
	err := r.rc.Read(r.readFn)
	n, sent, errno, wrote := r.rn, r.rsent, r.errno, r.wrote
	r.rp = nil
	if err == nil && errno == 0 && sent < len(r.pend) {
		// The socket was full: send the rest, waiting as needed, then read.
		_, err = r.write(r.pend[sent:])
		r.pend = r.pend[:0]
		if err != nil {
			return 0, err
		}
		return r.Read(p)
	}
	r.pend = r.pend[:0]
	switch {
	case err != nil:
		return 0, err
	case errno != 0 && wrote:
		return 0, os.NewSyscallError("write", errno)
	case errno != 0:
		return 0, os.NewSyscallError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// readStep is Read's function for rc.Read: it sends what is pending, then
// reads into r.rp once the socket is readable.
func (r *rawIO) readStep(fd uintptr) bool {
	if r.rsent < len(r.pend) {
		for r.rsent < len(r.pend) {
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&r.pend[r.rsent])), uintptr(len(r.pend)-r.rsent))
			switch e {
			case 0:
				r.rsent += int(m)
				r.n += int64(m)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return true // the socket is full: the rest goes out in Read
			default:
				r.errno, r.wrote = e, true
				return true
			}
		}
		return false // sent: wait for the answer
	}
	for {
		m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&r.rp[0])), uintptr(len(r.rp)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false // wait until readable
		}
		r.rn, r.errno = int(m), e
		return true
	}
}

func (r *rawIO) Write(p []byte) (int, error) {
	if len(r.pend)+len(p) <= maxPending {
		r.pend = append(r.pend, p...)
		return len(p), nil
	}
	if len(r.pend) > 0 {
		_, err := r.write(r.pend)
		r.pend = r.pend[:0]
		if err != nil {
			return 0, err
		}
	}
	return r.write(p)
}

// write sends p now, waiting while the socket is full.
func (r *rawIO) write(p []byte) (int, error) {
	var (
		n     int
		errno syscall.Errno
	)
	err := r.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			m, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch e {
			case 0:
				n += int(m)
				r.n += int64(m)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // wait until writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, err
	case errno != 0:
		return n, os.NewSyscallError("write", errno)
	}
	return n, nil
}
