package scenario

import (
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/load"
	"github.com/kcbench/kcbench/internal/results"
)

// adminConsole replays what Keycloak's admin console asks of the server
// when an administrator opens a tenant's users list, then one of the
// users it shows, then its clients list: the admin requests the console of the
// Keycloak line under test sent in headless Chromium, recorded by
// TestAdminConsoleRecording (adminconsole/<line>.json), not guessed. A
// screen's requests go out at once, as the browser sends them, and the
// screen is one operation (results.OpConsoleUsers, OpConsoleUser,
// OpConsoleUserRoles, OpConsoleClients) timed until the last answer.
type adminConsole struct {
	env *Env
	mu  sync.Mutex
	rec *consoleRecording // the server line's, once known
}

var _ load.Scenario = (*adminConsole)(nil)

func newAdminConsole(env *Env) load.Scenario { return &adminConsole{env: env} }

func (s *adminConsole) Name() string { return results.ScenarioAdminConsole }

// NewUser asks the server its version for its line's recording, once
// it answers: a server too slow for the first VU's deadline (the proof
// before the run allows a few seconds) is asked again by the next.
func (s *adminConsole) NewUser(ctx context.Context, id int) (load.User, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rec == nil {
		info, err := s.env.Admin.ServerInfo(ctx)
		if err != nil {
			return nil, fmt.Errorf("admin-console: the server's version: %w", err)
		}
		if s.rec, err = recordingFor(info.SystemInfo.Version); err != nil {
			return nil, err
		}
	}
	return &adminConsoleUser{s: s, rng: s.env.rng(results.ScenarioAdminConsole, id)}, nil
}

type adminConsoleUser struct {
	s   *adminConsole
	rng *rand.Rand
}

// Iterate opens a random tenant's users list, then a user the list
// showed (as the administrator clicks one: the first page's), then the
// clients list.
func (u *adminConsoleUser) Iterate(ctx context.Context, rec load.OpRecorder) error {
	t := u.s.env.Pool.pickTenant(u.rng)
	id := ""
	for _, sc := range u.s.rec.Screens {
		if sc.needsUser && id == "" {
			return load.CheckError{Check: fmt.Sprintf("the users list of realm %s showed no user to open (is the dataset seeded?)", t.Realm)}
		}
		start := time.Now()
		listed, err := u.screen(ctx, sc, t.Realm, id)
		rec.Record(consoleOps[sc.Name], start, err)
		if err != nil {
			return err
		}
		if len(listed) > 0 {
			id = listed[u.rng.IntN(len(listed))]
		}
	}
	return nil
}

// screen sends a screen's requests at once and waits for every answer;
// it returns the ids of the users a list among the answers holds.
func (u *adminConsoleUser) screen(ctx context.Context, sc consoleScreen, realm, id string) ([]string, error) {
	errs := make([]error, len(sc.Requests))
	answers := make([]json.RawMessage, len(sc.Requests))
	fill := strings.NewReplacer("{realm}", realm, "{user}", id)
	var wg sync.WaitGroup
	for i, r := range sc.Requests {
		method, p, _ := strings.Cut(r, " ")
		wg.Go(func() { errs[i] = u.s.env.Admin.Do(ctx, method, fill.Replace(p), nil, &answers[i]) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil || sc.Name != "users" {
		return nil, err
	}
	var ids []string
	for _, a := range answers {
		var users []struct {
			ID       string `json:"id"`
			Username string `json:"username"`
		}
		if json.Unmarshal(a, &users) != nil {
			continue // not a list of users
		}
		for _, us := range users {
			if us.ID != "" && us.Username != "" {
				ids = append(ids, us.ID)
			}
		}
	}
	return ids, nil
}

// The operations of the console's screens, by screen name.
var consoleOps = map[string]string{
	"users":   results.OpConsoleUsers,
	"user":    results.OpConsoleUser,
	"roles":   results.OpConsoleUserRoles,
	"clients": results.OpConsoleClients,
}

// consoleRecording is what the admin console of one Keycloak line sent
// for each screen: "METHOD path?query", {realm} and {user} standing for
// the tenant's realm and the user opened.
type consoleRecording struct {
	Keycloak string          `json:"keycloak"`
	Screens  []consoleScreen `json:"screens"`
}

type consoleScreen struct {
	Name     string   `json:"name"`
	Requests []string `json:"requests"`
	// needsUser: a request names {user} (set by loadRecording).
	needsUser bool
}

func (r *consoleRecording) screen(name string) *consoleScreen {
	for i := range r.Screens {
		if r.Screens[i].Name == name {
			return &r.Screens[i]
		}
	}
	return nil
}

//go:embed adminconsole/*.json
var consoleFiles embed.FS

// consoleLine names a Keycloak line's recording, e.g. "26.7".
func consoleLine(major, minor int) string { return strconv.Itoa(major) + "." + strconv.Itoa(minor) }

// loadRecording reads line's recording.
func loadRecording(line string) (*consoleRecording, error) {
	b, err := consoleFiles.ReadFile("adminconsole/" + line + ".json")
	if err != nil {
		return nil, err
	}
	var r consoleRecording
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("recording %s: %w", line, err)
	}
	for i, s := range r.Screens {
		if _, ok := consoleOps[s.Name]; !ok || len(s.Requests) == 0 {
			return nil, fmt.Errorf("recording %s: screen %q", line, s.Name)
		}
		r.Screens[i].needsUser = strings.Contains(strings.Join(s.Requests, " "), "{user}")
	}
	return &r, nil
}

// recordingFor is the recording of version's line, or of the newest
// earlier line of the same major version (a console of another major is
// another console); a version with none has none.
func recordingFor(version string) (*consoleRecording, error) {
	major, minor, ok := lineOf(version)
	if !ok {
		return nil, fmt.Errorf("admin-console: Keycloak version %q: want MAJOR.MINOR…", version)
	}
	entries, _ := consoleFiles.ReadDir("adminconsole")
	best, bestMinor := "", -1
	var lines []string
	for _, e := range entries {
		line := strings.TrimSuffix(e.Name(), path.Ext(e.Name()))
		lines = append(lines, line)
		ma, mi, ok := lineOf(line)
		if ok && ma == major && mi <= minor && mi > bestMinor {
			best, bestMinor = line, mi
		}
	}
	if best == "" {
		slices.Sort(lines)
		return nil, fmt.Errorf("admin-console: no recording of the admin console of Keycloak %s or an earlier %d.x line (kcbench has %s; TestAdminConsoleRecording with KCBENCH_RECORD=1 makes one)", version, major, cmp.Or(strings.Join(lines, ", "), "none"))
	}
	return loadRecording(best)
}

// lineOf reads the major and minor of a version ("26.7.3") or a line
// ("26.7"). (stack.ParseVersion takes only MAJOR.MINOR.PATCH of 26: a
// server may say more, e.g. a vendor build's suffix.)
func lineOf(version string) (major, minor int, ok bool) {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	var err1, err2 error
	major, err1 = strconv.Atoi(parts[0])
	minor, err2 = strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}
