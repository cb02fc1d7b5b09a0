//go:build integration

package report

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/kcbench/kcbench/internal/results"
)

// TestBrowserLoadCommandDashboard runs the real binary, `kcbench load
// --dashboard 127.0.0.1:0`, against a local server and watches its page in
// Chromium: while the run goes the live charts follow it with a phase and
// an ETA; when it ends, the page left open turns into the report of the
// run's results folder, whose verdict figures equal summary.json's.
func TestBrowserLoadCommandDashboard(t *testing.T) {
	p := newBrowser(t)
	bin := filepath.Join(t.TempDir(), "kcbench")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/kcbench").CombinedOutput(); err != nil {
		t.Fatalf("build kcbench: %v\n%s", err, out)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/realms/r/protocol/openid-connect/certs" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"keys":[{"kid":"k","kty":"RSA"}]}`) //nolint:errcheck // the client went away
	}))
	defer srv.Close()

	out := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "load", "--target", srv.URL, "--realm", "r", "--scenario", "jwks",
		"--executor", "constant-arrival-rate", "--rate", "40", "--vus", "2", "--duration", "8s",
		"--out", out, "--dashboard", "127.0.0.1:0")
	cmd.Env = append(cmd.Environ(), "LANG=C")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// the command says where its dashboard listens before the run starts
	lines := bufio.NewScanner(stderr)
	var u string
	var log strings.Builder
	for u == "" && lines.Scan() {
		log.WriteString(lines.Text() + "\n")
		if _, after, ok := strings.Cut(lines.Text(), "dashboard: "); ok {
			u = strings.TrimSpace(after)
		}
	}
	if u == "" {
		t.Fatalf("kcbench load did not say where its dashboard is:\n%s", log.String())
	}
	rest := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(stderr)
		rest <- string(b)
	}()

	if err := chromedp.Do(p.ctx, chromedp.Navigate(u)); err != nil {
		t.Fatal(err)
	}
	p.followLive(t, "jwks")
	p.screenshot(t, "load-command-live")

	if err := p.waitFor(`!!document.getElementById("verdict") && window.kcbenchDrawnMs !== undefined`, 60*time.Second); err != nil {
		t.Fatalf("the page did not turn into the run's report: %v", err)
	}
	waitErr := cmd.Wait()
	if waitErr != nil {
		t.Fatalf("kcbench load: %v\n%s%s", waitErr, log.String(), <-rest)
	}
	pt, err := results.ReadPoint(out)
	if err != nil {
		t.Fatal(err)
	}
	p.checkCharts(t)
	checkVerdict(t, p.figures(t, "#verdict"), []*results.Point{pt})
	p.screenshot(t, "load-command-final")
	p.checkClean(t, strings.TrimSuffix(u, "/"))
}
