package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/fileutil"
	"github.com/kcbench/kcbench/internal/kc"
)

// RealmFile is one realm representation read from a file (kcbench's own
// export, `kc.sh export`, or an admin console export). Raw keeps every
// field, including the ones kcbench does not model, so that seeding
// imports the realm as the file describes it.
type RealmFile struct {
	Path    string
	Realm   string
	Raw     map[string]any
	Users   []string
	Clients []FileClient
}

// FileClient is a client of a realm file.
type FileClient struct {
	ClientID       string `json:"client_id"`
	Public         bool   `json:"public"`
	StandardFlow   bool   `json:"standard_flow"`
	DirectGrants   bool   `json:"direct_grants"`
	ServiceAccount bool   `json:"service_account"`
	Secret         string `json:"secret,omitempty"`
}

// FileRealm is a realm of a file dataset, as the manifest records it.
type FileRealm struct {
	Realm   string       `json:"realm"`
	File    string       `json:"file"`
	Users   []string     `json:"users"`
	Clients []FileClient `json:"clients"`
}

// ReadRealmFile reads and checks one realm file. Errors name the file and
// the field.
func ReadRealmFile(path string) (*RealmFile, error) {
	b, err := fileutil.ReadFile(path, fileutil.MaxRealmFile)
	if err != nil {
		return nil, err
	}
	rf, err := ParseRealm(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rf.Path = path
	return rf, nil
}

// ParseRealm checks a realm representation.
func ParseRealm(b []byte) (*RealmFile, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line := 1 + bytes.Count(b[:min(int(se.Offset), len(b))], []byte("\n"))
			return nil, fmt.Errorf("line %d: invalid JSON: %v", line, err)
		}
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value (want one realm object)")
	}
	raw, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a realm representation: the top level is a %s, want an object with a \"realm\" field", jsonKind(v))
	}
	rf := &RealmFile{Raw: raw}
	name, ok := raw["realm"].(string)
	switch {
	case !ok && raw["realm"] == nil:
		return nil, errors.New(`not a realm representation: no "realm" field`)
	case !ok:
		return nil, fmt.Errorf(`field "realm": a %s, want a string`, jsonKind(raw["realm"]))
	case name == "" || strings.ContainsAny(name, "/\\?#%"):
		return nil, fmt.Errorf(`field "realm": %q is not a usable realm name`, name)
	}
	rf.Realm = name
	users, err := objects(raw, "users")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, u := range users {
		n, ok := u["username"].(string)
		if !ok || n == "" {
			return nil, fmt.Errorf("users[%d].username: missing or not a string", i)
		}
		if seen[n] {
			return nil, fmt.Errorf("users[%d].username: %q appears twice", i, n)
		}
		seen[n] = true
		rf.Users = append(rf.Users, n)
	}
	clients, err := objects(raw, "clients")
	if err != nil {
		return nil, err
	}
	for i, c := range clients {
		id, ok := c["clientId"].(string)
		if !ok || id == "" {
			return nil, fmt.Errorf("clients[%d].clientId: missing or not a string", i)
		}
		fc := FileClient{ClientID: id, Public: c["publicClient"] == true, StandardFlow: c["standardFlowEnabled"] != false,
			DirectGrants: c["directAccessGrantsEnabled"] == true, ServiceAccount: c["serviceAccountsEnabled"] == true}
		if s, ok := c["secret"].(string); ok && strings.Trim(s, "*") != "" {
			fc.Secret = s
		}
		rf.Clients = append(rf.Clients, fc)
	}
	for _, key := range []string{"groups", "organizations"} {
		if _, err := objects(raw, key); err != nil {
			return nil, err
		}
	}
	return rf, nil
}

func objects(raw map[string]any, key string) ([]map[string]any, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		return nil, nil
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("field %q: a %s, want a list", key, jsonKind(v))
	}
	out := make([]map[string]any, 0, len(arr))
	for i, e := range arr {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: a %s, want an object", key, i, jsonKind(e))
		}
		out = append(out, m)
	}
	return out, nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "list"
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// ReadRealmDir reads every *.json file of dir as a realm file, in name
// order.
func ReadRealmDir(dir string) ([]*RealmFile, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("%s: no *.json realm files", dir)
	}
	sort.Strings(paths)
	var out []*RealmFile
	names := map[string]string{}
	for _, p := range paths {
		rf, err := ReadRealmFile(p)
		if err != nil {
			return nil, err
		}
		if prev := names[rf.Realm]; prev != "" {
			return nil, fmt.Errorf("%s: realm %q is also in %s", p, rf.Realm, prev)
		}
		names[rf.Realm] = p
		out = append(out, rf)
	}
	return out, nil
}

// FilesPasswordRule is how seeding from realm files sets passwords.
const FilesPasswordRule = "every user's credentials are replaced by one password credential with the dataset password (field password); users without email, firstName or lastName get username@<realm>.example.com, \"User\" and the username, so that they can log in; confidential clients without a readable secret get Spec.ClientSecret"

// SeedFiles creates the realms of files that the Target does not hold
// yet (a realm is imported in one transaction, so one that exists is
// complete), applying FilesPasswordRule, and writes a manifest describing
// them.
func SeedFiles(ctx context.Context, adm *kc.Admin, files []*RealmFile, seed int64, o SeedOptions) (*SeedResult, error) {
	if len(files) == 0 {
		return nil, errors.New("no realm files")
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Progress == nil {
		o.Progress = func(int, int) {}
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency(Fast)
	}
	spec := filesSpec(files, seed)
	start := time.Now()
	var cpu0 time.Duration
	if o.ServerCPU != nil {
		cpu0, _ = o.ServerCPU()
	}
	realms, err := adm.Realms(ctx)
	if err != nil {
		return nil, err
	}
	present := map[string]bool{}
	for _, r := range realms {
		present[r.Realm] = true
	}
	res := &SeedResult{Strategy: "files"}
	var todo []*RealmFile
	for _, f := range files {
		if present[f.Realm] {
			res.Existing++
		} else {
			todo = append(todo, f)
		}
	}
	o.Logf("seed from files: %d realms, %d there, %d to import", len(files), res.Existing, len(todo))
	done := res.Existing
	var mu sync.Mutex
	o.Progress(done, len(files))
	err = Parallel(ctx, len(todo), o.Concurrency, func(ctx context.Context, k int) error {
		f := todo[k]
		if err := adm.CreateRealm(ctx, prepareRealm(f, spec)); err != nil {
			return fmt.Errorf("%s: realm %s: %w", f.Path, f.Realm, err)
		}
		mu.Lock()
		done++
		res.Added++
		o.Progress(done, len(files))
		mu.Unlock()
		return nil
	})
	res.Duration = time.Since(start)
	if o.ServerCPU != nil {
		if cpu1, e := o.ServerCPU(); e == nil {
			res.ServerCPU = cpu1 - cpu0
		}
	}
	if err != nil {
		return res, err // no manifest: it would claim realms that may be missing
	}
	res.Tenants = len(files)
	m := NewManifest(spec, o.Target)
	m.PasswordRule = FilesPasswordRule
	for _, f := range files {
		fr := FileRealm{Realm: f.Realm, File: filepath.Base(f.Path), Users: f.Users}
		for _, c := range f.Clients {
			if !c.Public && c.Secret == "" {
				c.Secret = spec.ClientSecret(0, f.Realm+"/"+c.ClientID)
			}
			fr.Clients = append(fr.Clients, c)
		}
		m.Files = append(m.Files, fr)
	}
	m.setTenants(len(files))
	m.Seeds = append(m.Seeds, SeedEvent{At: start.UTC(), Strategy: "files", Added: res.Added, To: len(files), Seconds: res.Duration.Seconds(), ServerCPUSec: res.ServerCPU.Seconds()})
	res.Manifest = m
	if o.ManifestPath != "" {
		if err := m.Write(o.ManifestPath); err != nil {
			return res, err
		}
	}
	return res, nil
}

// filesSpec describes a file dataset in Spec terms: realms mode, one
// tenant per file, the smallest user count as the content.
func filesSpec(files []*RealmFile, seed int64) Spec {
	h := sha256.New()
	minUsers := -1
	for _, f := range files {
		h.Write([]byte(f.Realm + "\n"))
		if minUsers < 0 || len(f.Users) < minUsers {
			minUsers = len(f.Users)
		}
	}
	c := DefaultContent
	c.Users = max(minUsers, 1)
	return Spec{Mode: ModeRealms, Tenants: len(files), Content: c, Prefix: "files-" + hex.EncodeToString(h.Sum(nil))[:8], Seed: seed}
}

// prepareRealm applies FilesPasswordRule to a copy of the file's realm.
func prepareRealm(f *RealmFile, spec Spec) map[string]any {
	r := maps.Clone(f.Raw)
	if r == nil {
		r = map[string]any{}
	}
	delete(r, "id")
	attrs, _ := r["attributes"].(map[string]any)
	na := maps.Clone(attrs)
	if na == nil {
		na = map[string]any{}
	}
	na[AttrDataset] = spec.Fingerprint()
	na[AttrComplete] = "true"
	r["attributes"] = na
	users, _ := objects(f.Raw, "users")
	var nu []any
	for _, u := range users {
		c := maps.Clone(u)
		name := c["username"].(string)
		delete(c, "id")
		c["credentials"] = []any{map[string]any{"type": "password", "value": spec.Password(), "temporary": false}}
		if _, ok := c["enabled"]; !ok {
			c["enabled"] = true
		}
		if s, _ := c["email"].(string); s == "" {
			c["email"] = name + "@" + f.Realm + ".example.com"
		}
		if s, _ := c["firstName"].(string); s == "" {
			c["firstName"] = "User"
		}
		if s, _ := c["lastName"].(string); s == "" {
			c["lastName"] = name
		}
		delete(c, "requiredActions")
		nu = append(nu, c)
	}
	if nu != nil {
		r["users"] = nu
	}
	clients, _ := objects(f.Raw, "clients")
	var nc []any
	for _, cl := range clients {
		c := maps.Clone(cl)
		delete(c, "id")
		id := c["clientId"].(string)
		if c["publicClient"] != true {
			if s, _ := c["secret"].(string); strings.Trim(s, "*") == "" {
				c["secret"] = spec.ClientSecret(0, f.Realm+"/"+id)
			}
		}
		nc = append(nc, c)
	}
	if nc != nil {
		r["clients"] = nc
	}
	return r
}

// WriteFilesText says what seeding n realm files from dir did (kcbench
// seed --from-dir).
func (r *SeedResult) WriteFilesText(w io.Writer, n int, dir, manifest string) {
	fmt.Fprintf(w, "%d realms from %s (%d were there, %d imported) in %.1f s, server CPU %.1f s\nmanifest: %s\n",
		n, dir, r.Existing, r.Added, r.Duration.Seconds(), r.ServerCPU.Seconds(), manifest)
}
