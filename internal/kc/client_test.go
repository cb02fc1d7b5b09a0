package kc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A read whose connection the server closes before answering is asked once
// more; a write is not (it may have been done).
func TestBrokenConnectionRetriesReadsOnly(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 || r.Method == http.MethodPost {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Write([]byte("7"))
	}))
	defer srv.Close()
	a := &Admin{c: New(srv.URL, nil), token: "t", expires: time.Now().Add(time.Hour), now: time.Now}
	n, err := a.Count(context.Background(), "/admin/realms/x/users/count")
	if err != nil || n != 7 {
		t.Fatalf("count after a closed connection: %d, %v", n, err)
	}
	if got := calls.Load(); got != 2 {
		t.Fatalf("%d requests, want 2", got)
	}
	calls.Store(1)
	err = a.Do(context.Background(), http.MethodPost, "/admin/realms", map[string]string{}, nil)
	if err == nil || !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("post on a closed connection: %v", err)
	}
	if got := calls.Load(); got != 2 {
		t.Fatalf("post sent %d times, want once", got-1)
	}
}
