package directory

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Attr is one attribute of an entry, with its values in order.
type Attr struct {
	Name   string
	Values []string
}

// Entry is one directory entry.
type Entry struct {
	DN    string
	Attrs []Attr
}

// Get returns the first value of attribute name ("" when absent).
func (e Entry) Get(name string) string {
	for _, a := range e.Attrs {
		if strings.EqualFold(a.Name, name) && len(a.Values) > 0 {
			return a.Values[0]
		}
	}
	return ""
}

// Suffix is the naming context kcbench's private directory holds.
const Suffix = "dc=kcbench,dc=local"

// ManagerDN is the private directory's root DN (its manager).
const ManagerDN = "cn=admin," + Suffix

// Root is the entry of suffix (a dcObject/organization whose dc is the
// first component of suffix, e.g. dc=kcbench).
func Root(suffix string) (Entry, error) {
	first, _, _ := strings.Cut(suffix, ",")
	k, v, ok := strings.Cut(first, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(k), "dc") || v == "" {
		return Entry{}, fmt.Errorf("suffix %q: want dc=NAME,…", suffix)
	}
	return Entry{DN: suffix, Attrs: []Attr{
		{"objectClass", []string{"top", "dcObject", "organization"}},
		{"dc", []string{v}},
		{"o", []string{v}},
	}}, nil
}

// OU is an organizationalUnit below parent.
func OU(name, parent string) Entry {
	return Entry{DN: "ou=" + EscapeDN(name) + "," + parent, Attrs: []Attr{
		{"objectClass", []string{"top", "organizationalUnit"}},
		{"ou", []string{name}},
	}}
}

// Person is a user as Keycloak's LDAP provider reads it with its default
// mappers for a non-AD directory: username uid (also the RDN), first name
// cn, last name sn, email mail. password is the userPassword value (a
// {SCHEME}hash, see Hash).
type Person struct {
	UID, FirstName, LastName, Email, Password string
}

// Entry is p below parent.
func (p Person) Entry(parent string) Entry {
	return Entry{DN: "uid=" + EscapeDN(p.UID) + "," + parent, Attrs: []Attr{
		{"objectClass", []string{"top", "person", "organizationalPerson", "inetOrgPerson"}},
		{"uid", []string{p.UID}},
		{"cn", []string{p.FirstName}},
		{"sn", []string{p.LastName}},
		{"mail", []string{p.Email}},
		{"userPassword", []string{p.Password}},
	}}
}

// EscapeDN escapes an attribute value for use in a DN (RFC 4514).
func EscapeDN(v string) string {
	var b strings.Builder
	for i, r := range v {
		switch {
		case strings.ContainsRune(`,+"\<>;=`, r),
			(i == 0 && (r == ' ' || r == '#')),
			(i == len(v)-1 && r == ' '):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == 0:
			b.WriteString(`\00`)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// WriteLDIF writes entries as LDIF content records (RFC 2849), the input
// of slapadd and ldapadd. Values that are not safe strings are base64
// ("attr:: …"); long lines are not folded (both tools read them).
func WriteLDIF(w io.Writer, entries []Entry) error {
	bw := bufio.NewWriter(w)
	for i, e := range entries {
		if i > 0 {
			bw.WriteByte('\n')
		}
		writeLine(bw, "dn", e.DN)
		for _, a := range e.Attrs {
			for _, v := range a.Values {
				writeLine(bw, a.Name, v)
			}
		}
	}
	return bw.Flush()
}

func writeLine(w *bufio.Writer, name, v string) {
	if safeString(v) {
		fmt.Fprintf(w, "%s: %s\n", name, v)
		return
	}
	fmt.Fprintf(w, "%s:: %s\n", name, base64.StdEncoding.EncodeToString([]byte(v)))
}

// safeString is RFC 2849's SAFE-STRING: ASCII without NUL, LF, CR, not
// starting with space, colon or '<', and not ending with a space.
func safeString(v string) bool {
	if v == "" {
		return true
	}
	if !utf8.ValidString(v) || v[0] == ' ' || v[0] == ':' || v[0] == '<' || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c == 0 || c == '\n' || c == '\r' || c > 127 {
			return false
		}
	}
	return true
}
