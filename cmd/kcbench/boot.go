package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/kcbench/kcbench/internal/stack"
)

// bootReport is `kcbench boot --json`.
type bootReport struct {
	KeycloakVersion string             `json:"keycloak_version"`
	Java            string             `json:"java_version"`
	Stack           string             `json:"stack"`
	Boots           []stack.BootResult `json:"boots"`
	Restarts        bootStats          `json:"restarts"`
}

type bootStats struct {
	N             int     `json:"n"`
	MinSeconds    float64 `json:"min_s"`
	MedianSeconds float64 `json:"median_s"`
	MaxSeconds    float64 `json:"max_s"`
	MedianRSSMiB  float64 `json:"median_rss_mib"`
}

func cmdBoot(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "boot", "boot [--repeat N] [--json] [stack flags]")
	var f stackFlags
	f.register(fs)
	repeat := fs.Int("repeat", 3, "number of restarts to measure")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *repeat < 1 {
		return usagef("--repeat must be >= 1")
	}
	d, err := f.dirs(e)
	if err != nil {
		return err
	}
	rep := bootReport{}
	s, err := stack.Attach(d, f.name)
	switch {
	case err == nil && s.Running():
		s.SetLogf(e.logf)
		e.logf("measuring %d restarts of stack %q", *repeat, f.name)
	case err == nil || errors.Is(err, stack.ErrNotUp):
		// No stack up: run a foreground one for the measurement only.
		f.name = fmt.Sprintf("boot-%d", os.Getpid())
		cfg, err := f.config(e, false)
		if err != nil {
			return err
		}
		e.logf("no stack up: starting a temporary one (first boot creates the schema)")
		s, err = stack.Start(ctx, cfg)
		if err != nil {
			return err
		}
		defer func() {
			cctx, cancel := cleanupCtx(ctx)
			defer cancel()
			if err := s.Down(cctx); err != nil {
				e.logf("cleanup: %v", err)
			}
		}()
		if b := s.State().LastBoot; b != nil {
			rep.Boots = append(rep.Boots, *b)
		}
	default:
		return err
	}
	if err := measureBoots(ctx, e, s, *repeat, &rep); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.stdout, rep)
	}
	return printBoots(e.stdout, rep)
}

// measureBoots restarts s repeat times and adds each boot to rep.
func measureBoots(ctx context.Context, e *env, s *stack.Stack, repeat int, rep *bootReport) error {
	st := s.State()
	rep.KeycloakVersion, rep.Java, rep.Stack = st.Options.Version, st.Java.Version, st.Name
	for i := 0; i < repeat; i++ {
		br, err := s.Restart(ctx)
		if err != nil {
			return fmt.Errorf("restart %d/%d: %w", i+1, repeat, err)
		}
		e.logf("restart %d/%d: ready in %.2f s, RSS %.0f MiB", i+1, repeat, br.Duration.Seconds(), mib(br.RSS))
		rep.Boots = append(rep.Boots, br)
	}
	rep.Restarts = summarizeBoots(rep.Boots)
	return nil
}

func summarizeBoots(boots []stack.BootResult) bootStats {
	var secs, rss []float64
	for _, b := range boots {
		if b.FirstDB {
			continue
		}
		secs = append(secs, b.Duration.Seconds())
		rss = append(rss, mib(b.RSS))
	}
	if len(secs) == 0 {
		return bootStats{}
	}
	slices.Sort(secs)
	slices.Sort(rss)
	return bootStats{N: len(secs), MinSeconds: secs[0], MedianSeconds: median(secs), MaxSeconds: secs[len(secs)-1], MedianRSSMiB: median(rss)}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

func printBoots(w io.Writer, rep bootReport) error {
	fmt.Fprintf(w, "Keycloak %s on Java %s, stack %s\n\n", rep.KeycloakVersion, rep.Java, rep.Stack)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "boot\tto ready (s)\tRSS at ready (MiB)\tprocess tree RSS (MiB)\tboot CPU (s)\t")
	n := 0
	for _, b := range rep.Boots {
		name := "first (schema)"
		if !b.FirstDB {
			n++
			name = fmt.Sprintf("restart %d", n)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f\t%.0f\t%.1f\t\n", name, b.Duration.Seconds(), mib(b.RSS), mib(b.TreeRSS), b.CPU.Seconds())
	}
	tw.Flush()
	r := rep.Restarts
	fmt.Fprintf(w, "\nrestarts: n=%d  min %.2f s  median %.2f s  max %.2f s  median RSS %.0f MiB\n", r.N, r.MinSeconds, r.MedianSeconds, r.MaxSeconds, r.MedianRSSMiB)
	return nil
}
