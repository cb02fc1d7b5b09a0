package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
	"time"
)

// BootReport is a series of boots of one stack (kcbench boot --json).
type BootReport struct {
	KeycloakVersion string       `json:"keycloak_version"`
	Java            string       `json:"java_version"`
	Stack           string       `json:"stack"`
	Boots           []BootResult `json:"boots"`
	Restarts        BootStats    `json:"restarts"`
}

// BootStats summarise the restarts (first boots, which create the
// schema, excluded).
type BootStats struct {
	N             int     `json:"n"`
	MinSeconds    float64 `json:"min_s"`
	MedianSeconds float64 `json:"median_s"`
	MaxSeconds    float64 `json:"max_s"`
	MedianRSSMiB  float64 `json:"median_rss_mib"`
}

// Measure restarts s repeat times and adds each boot to rep.
func (rep *BootReport) Measure(ctx context.Context, s *Stack, repeat int, logf func(string, ...any)) error {
	st := s.State()
	rep.KeycloakVersion, rep.Java, rep.Stack = st.Options.Version, st.Java.Version, st.Name
	for i := 0; i < repeat; i++ {
		br, err := s.Restart(ctx)
		if err != nil {
			return fmt.Errorf("restart %d/%d: %w", i+1, repeat, err)
		}
		logf("restart %d/%d: ready in %.2f s, RSS %.0f MiB", i+1, repeat, br.Duration.Seconds(), mib(br.RSS))
		rep.Boots = append(rep.Boots, br)
	}
	rep.Restarts = summarizeBoots(rep.Boots)
	return nil
}

func summarizeBoots(boots []BootResult) BootStats {
	var secs, rss []float64
	for _, b := range boots {
		if b.FirstDB {
			continue
		}
		secs = append(secs, b.Duration.Seconds())
		rss = append(rss, mib(b.RSS))
	}
	if len(secs) == 0 {
		return BootStats{}
	}
	slices.Sort(secs)
	slices.Sort(rss)
	return BootStats{N: len(secs), MinSeconds: secs[0], MedianSeconds: median(secs), MaxSeconds: secs[len(secs)-1], MedianRSSMiB: median(rss)}
}

func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// WriteText writes the boots as a table and the restarts' summary.
func (rep BootReport) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Keycloak %s on Java %s, stack %s\n\n", rep.KeycloakVersion, rep.Java, rep.Stack)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "boot\tto ready (s)\tRSS at ready (MiB)\tprocess tree RSS (MiB)\tboot CPU (s)\t")
	n := 0
	for _, b := range rep.Boots {
		name := "first (schema)"
		if b.SchemaCached {
			name = "first (cached schema)"
		}
		if !b.FirstDB {
			n++
			name = fmt.Sprintf("restart %d", n)
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.0f\t%.0f\t%.1f\t\n", name, b.Duration.Seconds(), mib(b.RSS), mib(b.TreeRSS), b.CPU.Seconds())
		for _, nb := range b.Nodes {
			// A cluster: each node's own time to ready and to the full
			// cluster view; the row above is the whole cluster's.
			fmt.Fprintf(tw, "  node %d (view at %.2f s)\t%.2f\t%.0f\t\t%.1f\t\n", nb.Node, nb.View.Seconds(), nb.Ready.Seconds(), mib(nb.RSS), nb.CPU.Seconds())
		}
	}
	tw.Flush()
	r := rep.Restarts
	fmt.Fprintf(w, "\nrestarts: n=%d  min %.2f s  median %.2f s  max %.2f s  median RSS %.0f MiB\n", r.N, r.MinSeconds, r.MedianSeconds, r.MaxSeconds, r.MedianRSSMiB)
	return nil
}

// MeasureBoots measures repeat restarts (kcbench boot): of the running
// stack f names, else of a temporary foreground one started for it (whose
// first boot, creating the schema, is reported too) and stopped after.
func (f *Flags) MeasureBoots(ctx context.Context, repeat int, getenv func(string) string, logf func(string, ...any)) (*BootReport, error) {
	d, err := f.Dirs(getenv)
	if err != nil {
		return nil, err
	}
	rep := &BootReport{}
	s, err := Attach(d, f.Name)
	switch {
	case err == nil && s.Running():
		s.SetLogf(logf)
		logf("measuring %d restarts of stack %q", repeat, f.Name)
	case err == nil || errors.Is(err, ErrNotUp):
		f.Name = fmt.Sprintf("boot-%d", os.Getpid())
		cfg, err := f.Config(getenv, logf, false)
		if err != nil {
			return nil, err
		}
		logf("no stack up: starting a temporary one (first boot creates the schema)")
		if s, err = Start(ctx, cfg); err != nil {
			return nil, err
		}
		defer func() {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			if err := s.Down(cctx); err != nil {
				logf("cleanup: %v", err)
			}
		}()
		if b := s.State().LastBoot; b != nil {
			rep.Boots = append(rep.Boots, *b)
		}
	default:
		return nil, err
	}
	return rep, rep.Measure(ctx, s, repeat, logf)
}
