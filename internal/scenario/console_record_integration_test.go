//go:build integration

package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/kcbench/kcbench/internal/stack"
)

// The admin console of the Keycloak under test, in headless Chromium, as
// its administrator: a tenant's users list, one user, the clients list.
// The admin requests it sends for each screen must be the recording of
// that Keycloak line that the admin-console workload replays
// (adminconsole/<major.minor>.json); KCBENCH_RECORD=1 writes the
// recording instead. A line without a recording is recorded into the
// test's log only.
func TestAdminConsoleRecording(t *testing.T) {
	exe := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			exe = p
			break
		}
	}
	if exe == "" {
		t.Skip("no chromium on PATH (apt-get install chromium; .ci/run installs it)")
	}
	f := setup(t)
	version := shared.Get(t).State().Options.Version
	spec := f.realms.Spec
	realm := spec.RealmOf(1)
	u, err := f.admin.FindUser(t.Context(), realm, spec.Username(1, 1))
	if err != nil || u == nil {
		t.Fatalf("user 1: %v", err)
	}
	got := recordConsole(t, exe, f.tg.BaseURL, f.tg.Admin.Username, f.tg.Admin.Password.Reveal(), realm, u.ID)
	got.Keycloak = version
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	enc.Encode(got)
	b := buf.Bytes()
	v, err := stack.ParseVersion(version)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("adminconsole", consoleLine(v.Major, v.Minor)+".json")
	if os.Getenv("KCBENCH_RECORD") != "" {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := loadRecording(consoleLine(v.Major, v.Minor))
	if err != nil {
		t.Logf("Keycloak %s has no recording (%v); what its console sent:\n%s", version, err, b)
		return
	}
	// A second visit before a verdict: a console that answers late (a
	// cold JVM) can put a screen's requests into the next one; one that
	// disagrees twice has changed.
	if d := differs(want, got); d != "" {
		t.Logf("first visit: %s; visiting again", d)
		got = recordConsole(t, exe, f.tg.BaseURL, f.tg.Admin.Username, f.tg.Admin.Password.Reveal(), realm, u.ID)
		if d := differs(want, got); d != "" {
			t.Errorf("the console of Keycloak %s, twice: %s\nthe recording is %s (KCBENCH_RECORD=1 records it anew)", version, d, path)
		}
	}
}

// differs says how got's screens differ from want's ("" when alike).
func differs(want, got *consoleRecording) string {
	var ds []string
	for _, s := range want.Screens {
		g := got.screen(s.Name)
		if g == nil || !slices.Equal(g.Requests, s.Requests) {
			ds = append(ds, fmt.Sprintf("screen %s sent %v, the recording says %v", s.Name, g, s.Requests))
		}
	}
	return strings.Join(ds, "; ")
}

// recordConsole logs in to the admin console at base, on realm's users
// list, and clicks, each once the console has gone quiet, on user id, on
// its role mapping tab, on Clients and on Users; it returns the admin requests each screen sent,
// their realm and user made placeholders.
func recordConsole(t *testing.T, exe, base, user, password, realm, id string) *consoleRecording {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 1000),
		chromedp.Flag("ignore-certificate-errors", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 3*time.Minute)
	defer func() { cancelT(); cancelC(); cancelA() }()

	var (
		mu     sync.Mutex
		screen string
		last   = time.Now()
		rec    = map[string][]string{}
	)
	err := chromedp.Listen(ctx, func(ev any) {
		e, ok := ev.(*network.EventRequestWillBeSent)
		if !ok || (e.Type != network.ResourceTypeXHR && e.Type != network.ResourceTypeFetch) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		last = time.Now()
		if screen == "" {
			return
		}
		if r, ok := consoleRequest(e.Request.Method, e.Request.URL, base, realm, id); ok && !slices.Contains(rec[screen], r) {
			rec[screen] = append(rec[screen], r)
		}
	})
	if err == nil {
		_, err = chromedp.Call(ctx, network.Enable, network.EnableParams{})
	}
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// quiet waits until the console has sent nothing for 3 s.
	quiet := func() error {
		for {
			mu.Lock()
			idle := time.Since(last)
			mu.Unlock()
			if idle > 3*time.Second {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	err = chromedp.Do(ctx, chromedp.Navigate(base+"/admin/master/console/#/"+realm+"/users"),
		chromedp.WaitVisible(chromedp.ID("username")),
		chromedp.SendKeys(chromedp.ID("username"), user),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("kc-login")),
		chromedp.WaitNotPresent(chromedp.ID("kc-login")),
		// The list drawn: a console still booting sends more (a first
		// boot of a line, its JIT cold, paused over 2 s between them).
		chromedp.WaitVisible(chromedp.CSS(`a[href$="/users/`+id+`/settings"]`)))
	if err == nil {
		err = quiet()
	}
	if err != nil {
		t.Fatalf("the admin console's login in Chromium: %v", err)
	}
	// From the users list the login lands on: a click on the user, on its
	// role mapping tab, on Clients, on Users, as an administrator goes.
	for _, s := range []struct{ name, link string }{
		{"user", `a[href$="/users/` + id + `/settings"]`},
		{"roles", `[data-testid="role-mapping-tab"]`},
		{"clients", "a#nav-item-clients"},
		{"users", "a#nav-item-users"},
	} {
		mu.Lock()
		screen, last = s.name, time.Now()
		mu.Unlock()
		err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(s.link)))
		if err == nil {
			err = quiet()
		}
		if err != nil {
			t.Fatalf("screen %s (a click on %s): %v", s.name, s.link, err)
		}
	}
	mu.Lock() // Chromium runs until the deferred cancel: a late request would append
	screen = ""
	done := map[string][]string{}
	for k, v := range rec {
		done[k] = slices.Clone(v)
	}
	mu.Unlock()
	out := &consoleRecording{}
	for _, name := range []string{"users", "user", "roles", "clients"} {
		rs := done[name]
		slices.Sort(rs)
		if len(rs) == 0 {
			t.Errorf("screen %s sent no admin request", name)
		}
		out.Screens = append(out.Screens, consoleScreen{Name: name, Requests: rs})
	}
	return out
}

// consoleRequest is a request the console sent, "METHOD path?query" with
// realm and user id made {realm} and {user}, when it is an admin request
// to base; ok false for anything else (the console's own files, the
// token endpoint).
func consoleRequest(method, raw, base, realm, id string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || !strings.HasPrefix(raw, base) || !strings.HasPrefix(u.Path, "/admin/") {
		return "", false
	}
	p := u.Path
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	p = strings.ReplaceAll(p, id, "{user}")
	p = strings.ReplaceAll(p, "/realms/"+realm, "/realms/{realm}")
	p = strings.ReplaceAll(p, "="+realm, "={realm}")
	return method + " " + p, true
}

// jsString quotes s as a JavaScript string.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
