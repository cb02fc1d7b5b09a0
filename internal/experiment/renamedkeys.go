package experiment

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// keyRename is a YAML key that was renamed with the flag it mirrors: at
// path (the keys from the top, "[]" for every element of a list), old is
// now now.
type keyRename struct {
	path     []string
	old, now string
}

// runFileRenames are the former keys of a run file (kcbench load --file).
var runFileRenames = []keyRename{
	{old: "seed", now: "random_seed"},
}

// fileRenames are the former keys of an experiment file.
var fileRenames = []keyRename{
	{path: []string{"stack"}, old: "pg_durable", now: "db_durable"},
	{path: []string{"workloads", "[]"}, old: "seed", now: "random_seed"},
	{path: []string{"workloads", "[]", "capacity"}, old: "start", now: "start_rate"},
}

// renamedKey is the first former key of renames the YAML document b
// holds, as "line N: stack.pg_durable is now db_durable"; nil when it
// holds none (or is no YAML: the strict decoding says why).
func renamedKey(b []byte, renames []keyRename) error {
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	for _, r := range renames {
		if k, at := findKey(doc.Content[0], r.path, r.old, ""); k != nil {
			return fmt.Errorf("line %d: %s%s is now %s", k.Line, at, r.old, r.now)
		}
	}
	return nil
}

// findKey is the key node old of the mappings path leads to from n, and
// where it is ("workloads[1].capacity."); at is where n is.
func findKey(n *yaml.Node, path []string, old, at string) (*yaml.Node, string) {
	switch {
	case len(path) == 0 && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == old {
				return n.Content[i], at
			}
		}
	case len(path) > 0 && path[0] == "[]" && n.Kind == yaml.SequenceNode:
		for i, e := range n.Content {
			if k, kat := findKey(e, path[1:], old, fmt.Sprintf("%s[%d].", strings.TrimSuffix(at, "."), i)); k != nil {
				return k, kat
			}
		}
	case len(path) > 0 && n.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == path[0] {
				return findKey(n.Content[i+1], path[1:], old, at+path[0]+".")
			}
		}
	}
	return nil, ""
}
