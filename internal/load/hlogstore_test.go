package load

import (
	"bytes"
	"os"
	"testing"
)

// The store keeps encodings in its file, not in memory, and gives them
// back; after a write fails (a full disk) it keeps the next ones in
// memory, and what the file held stays readable.
func TestHlogStore(t *testing.T) {
	var s hlogStore
	a, b := []byte("first encoding"), []byte("second, longer encoding")
	ra, rb := s.put(a), s.put(b)
	if s.f == nil || ra.mem != nil || rb.mem != nil || rb.off != int64(len(a)) {
		t.Fatalf("refs %+v %+v, file %v: want both in the file, one after the other", ra, rb, s.f)
	}
	for _, c := range []struct {
		ref  hlogRef
		want []byte
	}{{ra, a}, {rb, b}} {
		if got, err := s.get(c.ref); err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("get: %q, %v; want %q", got, err, c.want)
		}
	}
	w := s.f
	ro, err := os.Open(os.DevNull) // read-only: the next write fails
	if err != nil {
		t.Fatal(err)
	}
	s.f = ro
	rc := s.put([]byte("third"))
	if got, err := s.get(rc); rc.mem == nil || err != nil || string(got) != "third" || !s.failed {
		t.Errorf("after a write failed: %+v, %q, %v: want it in memory", rc, got, err)
	}
	s.f = w
	if got, err := s.get(ra); err != nil || !bytes.Equal(got, a) {
		t.Errorf("what the file held before the failure: %q, %v", got, err)
	}
	ro.Close()
	w.Close()
}
