package load

import (
	"fmt"
	"os"
)

// hlogStore keeps the encodings of the measured intervals until WriteHlog
// reads them: in a temporary file, removed from its folder at once (the
// open file keeps it, the system frees it when it is closed or the process
// ends), so that memory stays flat however long a run lasts (in memory
// they would grow with it, one interval a second per operation); in memory
// when no file can be made.
type hlogStore struct {
	f      *os.File
	off    int64
	tried  bool
	failed bool // a write failed (a full disk): memory from then on
}

// hlogRef is one encoding in the store: at off in the file, n bytes long,
// or mem when kept in memory.
type hlogRef struct {
	off int64
	n   int32
	mem []byte
}

// put stores b (which the caller may reuse).
func (s *hlogStore) put(b []byte) hlogRef {
	if !s.tried {
		s.tried = true
		if f, err := os.CreateTemp("", "kcbench-hlog-*"); err == nil {
			os.Remove(f.Name())
			s.f = f
		}
	}
	if s.f != nil && !s.failed {
		if n, err := s.f.WriteAt(b, s.off); err == nil {
			r := hlogRef{off: s.off, n: int32(n)}
			s.off += int64(n)
			return r
		}
		s.failed = true // what is in the file stays readable
	}
	return hlogRef{mem: append([]byte(nil), b...)}
}

// get reads r back.
func (s *hlogStore) get(r hlogRef) ([]byte, error) {
	if r.mem != nil {
		return r.mem, nil
	}
	if s.f == nil {
		return nil, fmt.Errorf("load: interval log store lost (%d bytes at %d)", r.n, r.off)
	}
	b := make([]byte, r.n)
	if _, err := s.f.ReadAt(b, r.off); err != nil {
		return nil, fmt.Errorf("load: reading an interval back from its temporary file: %w", err)
	}
	return b, nil
}
