package observe

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// servePods serves one metrics text per path: /a/metrics, /b/metrics, …
func servePods(t *testing.T, texts map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		text, ok := texts[strings.TrimSuffix(r.URL.Path, "/metrics")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(text))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestReadPods(t *testing.T) {
	t.Parallel()
	capture, err := os.ReadFile("testdata/keycloak-26.7.3-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	node := func(name string, size int, up float64) string {
		return fmt.Sprintf("process_uptime_seconds %g\nvendor_cluster_size{cache_manager=\"DefaultCacheManager\",node=%q} %d.0\n", up, name, size)
	}
	srv := servePods(t, map[string]string{
		"/capture": string(capture),
		"/kc-0":    node("kc-0", 3, 600),
		"/kc-1":    node("kc-1", 3, 90.5),
		"/kc-1b":   node("kc-1", 3, 91),
		"/old":     "process_uptime_seconds 12\n", // no cluster metric
		"/none":    "jvm_threads_live_threads 10\n",
	})
	pods, err := ReadPods(t.Context(), nil, []string{srv.URL + "/capture"})
	if err != nil || len(pods) != 1 || pods[0].ClusterSize != 1 || pods[0].Node != "vm-3651" || pods[0].Uptime != 486558*time.Millisecond {
		t.Fatalf("26.7.3's capture: %+v, %v", pods, err)
	}
	if w := PodsWarning(pods); w != "" {
		t.Errorf("a node alone, its one URL: %q", w)
	}

	cases := []struct {
		paths []string
		want  string // in the warning; "" for none
	}{
		{[]string{"/kc-0", "/kc-1"}, "cluster has 3 nodes"},
		{[]string{"/kc-1"}, "counts 1 of the 3 pods"},
		{[]string{"/kc-0", "/kc-1", "/kc-1b"}, "same Keycloak node (kc-1)"},
		{[]string{"/old"}, ""},
	}
	for _, c := range cases {
		urls := make([]string, len(c.paths))
		for i, p := range c.paths {
			urls[i] = srv.URL + p
		}
		pods, err := ReadPods(t.Context(), nil, urls)
		if err != nil {
			t.Fatalf("%v: %v", c.paths, err)
		}
		w := PodsWarning(pods)
		if (c.want == "") != (w == "") || !strings.Contains(w, c.want) {
			t.Errorf("%v: warning %q, want %q", c.paths, w, c.want)
		}
	}
	pods, _ = ReadPods(t.Context(), nil, []string{srv.URL + "/kc-0", srv.URL + "/kc-1"})
	if Youngest(pods) != 90500*time.Millisecond || ClusterSize(pods) != 3 {
		t.Errorf("youngest %s, cluster %d: want 1m30.5s and 3", Youngest(pods), ClusterSize(pods))
	}
	if Youngest(nil) != 0 || ClusterSize(nil) != 0 {
		t.Error("no pods: want zeros")
	}
	for _, bad := range []string{"/none", "/missing"} {
		if _, err := ReadPods(t.Context(), nil, []string{srv.URL + "/kc-0", srv.URL + bad}); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
