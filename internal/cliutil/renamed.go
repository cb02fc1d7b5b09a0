package cliutil

import (
	"flag"
	"fmt"
)

// Renamed registers old, a flag's former name, as a hidden flag of fs:
// giving it, in any form (--old, --old=v, --old v), is a usage error
// naming its successor, e.g. "--seed is now --random-seed (kcbench help
// load)". now is the new flag as it is given: "random-seed", or "log db"
// for a flag that became a value. Help pages and the reference leave a
// former name out (Hidden).
func Renamed(fs *flag.FlagSet, old, now string) {
	fs.Var(&renamed{old: old, now: now, cmd: fs.Name()}, old, "former name of --"+now)
}

// renamed is the Value of a former flag name: it refuses every value.
type renamed struct{ old, now, cmd string }

func (r *renamed) String() string { return "" }

// IsBoolFlag lets --old stand alone, so that it is refused by name
// whatever follows it (rather than taking the next argument as a value,
// or failing for want of one).
func (r *renamed) IsBoolFlag() bool { return true }

func (r *renamed) Set(string) error {
	return fmt.Errorf("--%s is now --%s (kcbench help %s)", r.old, r.now, r.cmd)
}

// Hidden tells whether a flag is left out of help pages and the
// reference: a former name Renamed registered. It sees through the
// wrapping parsing puts around every flag's Value.
func Hidden(fl *flag.Flag) bool {
	if fl == nil {
		return false
	}
	v := fl.Value
	if c, ok := v.(*checkedValue); ok {
		v = c.Value
	}
	_, ok := v.(*renamed)
	return ok
}
