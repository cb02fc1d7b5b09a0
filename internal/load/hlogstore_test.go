package load

import (
	"bytes"
	"testing"
)

// The store keeps encodings in its file, not in memory, and gives them
// back; after the file fails (a full disk) it keeps them in memory.
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
	s.f.Close() // the next write fails
	rc := s.put([]byte("third"))
	if got, err := s.get(rc); rc.mem == nil || err != nil || string(got) != "third" {
		t.Errorf("after the file failed: %+v, %q, %v: want it in memory", rc, got, err)
	}
	if _, err := s.get(ra); err == nil {
		t.Error("an encoding of the lost file read back without an error")
	}
}
