package gate

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// Synopsis is the usage line of kcbench gate (its help page is cmd/kcbench/help).
const Synopsis = `gate --baseline DIR --current DIR [--max-regression 10%] [--json] [flags]`

// percentFlag reads "10%" or "10".
type percentFlag float64

func (p *percentFlag) String() string { return strconv.FormatFloat(float64(*p), 'g', -1, 64) + "%" }

func (p *percentFlag) Set(v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "%")), 64)
	if err != nil || f < 0 || f != f {
		return fmt.Errorf("%q: want a percentage such as 10%%", v)
	}
	*p = percentFlag(f)
	return nil
}

// Flags are kcbench gate's flags.
type Flags struct {
	Baseline, Current string
	JSON              bool
	JSONOut           string
	maxReg            percentFlag
	floor             time.Duration
}

// RegisterFlags adds kcbench gate's flags.
func (f *Flags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&f.Baseline, "baseline", "", "`DIR` of the baseline results")
	fs.StringVar(&f.Current, "current", "", "`DIR` of the results to check")
	f.maxReg = percentFlag(DefaultMaxRegressionPct)
	fs.Var(&f.maxReg, "max-regression", "`PCT` a figure may worsen by before it fails the gate")
	fs.DurationVar(&f.floor, "min-latency-delta", time.Duration(DefaultMinLatencyDeltaMs*float64(time.Millisecond)),
		"latency changes smaller than this never fail the gate")
	fs.BoolVar(&f.JSON, "json", false, "write the comparison as JSON instead of a table")
	fs.StringVar(&f.JSONOut, "json-out", "", "also write the comparison as JSON to `FILE`")
}

// Options are the comparison's options; bad flags are usage errors.
func (f *Flags) Options() (Options, error) {
	if f.Baseline == "" || f.Current == "" {
		return Options{}, cliutil.Usagef("gate: want --baseline DIR and --current DIR")
	}
	if f.floor < 0 {
		return Options{}, cliutil.Usagef("gate: --min-latency-delta must not be negative")
	}
	return Options{MaxRegressionPct: float64(f.maxReg), MinLatencyDeltaMs: float64(f.floor) / float64(time.Millisecond)}, nil
}
