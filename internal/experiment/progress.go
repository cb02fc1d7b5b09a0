package experiment

import (
	"fmt"
	"io"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

// ProgressLine returns a Runner.Progress that writes a point's progress
// to w: one line redrawn in place on a terminal (tty), else a line every
// 5 s at most; nothing when quiet. Done ends the line on a terminal.
func ProgressLine(w io.Writer, tty, quiet bool) (progress func(point, wl string, p load.Progress), done func()) {
	var last time.Time
	progress = func(point, wl string, p load.Progress) {
		if quiet || time.Since(last) < 5*time.Second && !tty {
			return
		}
		last = time.Now()
		line := fmt.Sprintf("  %s %s: %s  %d iterations (%.1f/s)  errors %d", point, wl, p.Elapsed.Round(time.Second), p.Iterations, p.Rate, p.Errors)
		if tty {
			fmt.Fprintf(w, "\r%s\x1b[K", line)
		} else {
			fmt.Fprintln(w, line)
		}
	}
	done = func() {
		if tty {
			fmt.Fprintln(w)
		}
	}
	return progress, done
}

// StackName is the stack an experiment runs on: name, unless it is the
// default one (or none), then exp-<experiment>.
func StackName(name, experiment string) string {
	if name == "" || name == "default" {
		return "exp-" + experiment
	}
	return name
}
