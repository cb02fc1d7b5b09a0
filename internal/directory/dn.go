package directory

import "strings"

// cutRDN splits a DN after its first RDN (an escaped comma does not
// split).
func cutRDN(dn string) (rdn, parent string, ok bool) {
	for i := 0; i < len(dn); i++ {
		switch dn[i] {
		case '\\':
			i++
		case ',':
			return dn[:i], dn[i+1:], true
		}
	}
	return dn, "", false
}

// normDN lower-cases a DN and drops spaces around its separators, enough
// to compare the DNs kcbench writes.
func normDN(dn string) string {
	var parts []string
	for {
		rdn, rest, ok := cutRDN(dn)
		k, v, _ := strings.Cut(rdn, "=")
		parts = append(parts, strings.ToLower(strings.TrimSpace(k))+"="+strings.ToLower(strings.TrimSpace(v)))
		if !ok {
			break
		}
		dn = rest
	}
	return strings.Join(parts, ",")
}
