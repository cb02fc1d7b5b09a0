package directory

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// Conn says how to reach and bind to a directory.
type Conn struct {
	// URL is ldap://HOST:PORT (ldaps:// works too).
	URL    string
	BindDN string
	// Password is the bind password (never printed).
	Password string
}

// Errors of Check.
var (
	ErrUnreachable = errors.New("directory unreachable")
	ErrBind        = errors.New("bind refused")
)

// DialTimeout bounds a connection attempt.
const DialTimeout = 5 * time.Second

// ValidateURL checks that raw is an ldap:// or ldaps:// URL with a host.
func ValidateURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" {
		return fmt.Errorf("ldap url %q: want ldap://HOST:PORT or ldaps://HOST:PORT", raw)
	}
	if u.User != nil {
		return fmt.Errorf("ldap url %q: give the bind DN and password with --ldap-bind-dn and --ldap-password-file, not in the URL", raw)
	}
	return nil
}

// dial connects and binds.
func (c Conn) dial(ctx context.Context) (*ldap.Conn, error) {
	if err := ValidateURL(c.URL); err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: DialTimeout}
	if dl, ok := ctx.Deadline(); ok {
		d.Deadline = dl
	}
	l, err := ldap.DialURL(c.URL, ldap.DialWithDialer(d))
	if err != nil {
		var le *ldap.Error
		if errors.As(err, &le) && le.Err != nil {
			err = le.Err
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrUnreachable, c.URL, err)
	}
	l.SetTimeout(30 * time.Second)
	if err := l.Bind(c.BindDN, c.Password); err != nil {
		l.Close()
		if ldap.IsErrorWithCode(err, ldap.LDAPResultInvalidCredentials) {
			return nil, fmt.Errorf("%w: %s: bind as %q: invalid credentials (wrong bind DN or password)", ErrBind, c.URL, c.BindDN)
		}
		return nil, fmt.Errorf("%w: %s: bind as %q: %v", ErrBind, c.URL, c.BindDN, err)
	}
	return l, nil
}

// Check connects and binds once: the directory answers and the
// credentials are right.
func (c Conn) Check(ctx context.Context) error {
	l, err := c.dial(ctx)
	if err != nil {
		return err
	}
	return l.Close()
}

// DefaultAddConcurrency is the number of connections Add writes over.
const DefaultAddConcurrency = 8

// AddResult counts what Add did.
type AddResult struct {
	Added, Existing int
}

// Add writes entries in order of their position (parents must come before
// children within one call; entries are written in batches of
// concurrency connections, each entry once). An entry that already exists
// is counted, not an error: a seed can be repeated. concurrency ≤ 0 means
// DefaultAddConcurrency.
func (c Conn) Add(ctx context.Context, entries []Entry, concurrency int) (AddResult, error) {
	if concurrency <= 0 {
		concurrency = DefaultAddConcurrency
	}
	var added, existing atomic.Int64
	// Parents first: the entries up to the last one that is a parent of
	// another go one by one, the rest in parallel.
	serial := parentsPrefix(entries)
	conns := make([]*ldap.Conn, 0, concurrency)
	defer func() {
		for _, l := range conns {
			l.Close()
		}
	}()
	add := func(l *ldap.Conn, e Entry) error {
		req := ldap.NewAddRequest(e.DN, nil)
		for _, a := range e.Attrs {
			req.Attribute(a.Name, a.Values)
		}
		err := l.Add(req)
		switch {
		case err == nil:
			added.Add(1)
		case ldap.IsErrorWithCode(err, ldap.LDAPResultEntryAlreadyExists):
			existing.Add(1)
		default:
			return fmt.Errorf("add %s: %w", e.DN, err)
		}
		return nil
	}
	l, err := c.dial(ctx)
	if err != nil {
		return AddResult{}, err
	}
	conns = append(conns, l)
	for _, e := range entries[:serial] {
		if err := ctx.Err(); err != nil {
			return AddResult{int(added.Load()), int(existing.Load())}, err
		}
		if err := add(l, e); err != nil {
			return AddResult{int(added.Load()), int(existing.Load())}, err
		}
	}
	rest := entries[serial:]
	for len(conns) < min(concurrency, len(rest)) {
		l, err := c.dial(ctx)
		if err != nil {
			return AddResult{int(added.Load()), int(existing.Load())}, err
		}
		conns = append(conns, l)
	}
	var next atomic.Int64
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for _, l := range conns[:min(len(conns), len(rest))] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				k := int(next.Add(1) - 1)
				if k >= len(rest) || ctx.Err() != nil {
					return
				}
				if err := add(l, rest[k]); err != nil {
					once.Do(func() { firstErr = err })
					next.Store(int64(len(rest)))
					return
				}
			}
		}()
	}
	wg.Wait()
	res := AddResult{int(added.Load()), int(existing.Load())}
	if firstErr != nil {
		return res, firstErr
	}
	return res, ctx.Err()
}

// parentsPrefix is the length of the shortest prefix of entries that
// holds every entry another entry of the list lies below.
func parentsPrefix(entries []Entry) int {
	dns := make(map[string]bool, len(entries))
	for _, e := range entries {
		if _, parent, ok := cutRDN(e.DN); ok {
			dns[normDN(parent)] = true
		}
	}
	n := 0
	for i, e := range entries {
		if dns[normDN(e.DN)] {
			n = i + 1
		}
	}
	return n
}

// ExistingDNs lists the DNs at and below base, normalized (lower case, no
// spaces around separators); empty when base does not exist.
func (c Conn) ExistingDNs(ctx context.Context, base string) (map[string]bool, error) {
	l, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	req := ldap.NewSearchRequest(base, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
		"(objectClass=*)", []string{"1.1"}, nil)
	res, err := l.SearchWithPaging(req, 1000)
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("search %s: %w", base, err)
	}
	dns := make(map[string]bool, len(res.Entries))
	for _, e := range res.Entries {
		dns[normDN(e.DN)] = true
	}
	return dns, nil
}

// Missing are the entries whose DN is not in existing (from ExistingDNs).
func Missing(entries []Entry, existing map[string]bool) []Entry {
	var out []Entry
	for _, e := range entries {
		if !existing[normDN(e.DN)] {
			out = append(out, e)
		}
	}
	return out
}
