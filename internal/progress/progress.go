// Package progress draws a one-line progress bar for long work (seeding,
// restores): redrawn in place on a terminal, a plain line every few seconds
// otherwise. It only formats; callers decide where it goes.
package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/kcbench/kcbench/internal/load"
)

// Bar reports done/total with rate and ETA.
type Bar struct {
	w     io.Writer
	tty   bool
	what  string
	start time.Time
	every time.Duration

	mu       sync.Mutex
	last     time.Time
	lastDone int
	base     int // done at start (not counted in the rate)
	started  bool
}

// New returns a bar writing to w; it redraws in place when w is a
// terminal.
func New(w io.Writer, what string) *Bar {
	return &Bar{w: w, tty: IsTerminal(w), what: what, start: time.Now(), every: 5 * time.Second}
}

// IsTerminal reports whether w is a character device.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// Update records progress; it is safe for concurrent use.
func (b *Bar) Update(done, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if !b.started {
		b.started, b.base = true, done
	}
	b.lastDone = done
	interval := b.every
	if b.tty {
		interval = 200 * time.Millisecond
	}
	if done < total && now.Sub(b.last) < interval {
		return
	}
	b.last = now
	line := b.line(done, total, now)
	if b.tty {
		fmt.Fprintf(b.w, "\r%s\x1b[K", line)
		if done >= total {
			fmt.Fprintln(b.w)
		}
		return
	}
	fmt.Fprintln(b.w, line)
}

func (b *Bar) line(done, total int, now time.Time) string {
	el := now.Sub(b.start)
	rate := 0.0
	if el > 0 {
		rate = float64(done-b.base) / el.Seconds()
	}
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
	}
	const width = 24
	fill := 0
	if total > 0 {
		fill = width * done / total
	}
	return fmt.Sprintf("%s [%s%s] %d/%d  %.2f/s  elapsed %s  ETA %s", b.what,
		strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, rate, el.Round(time.Second), eta)
}

// Load draws a load run's progress on stderr: one line redrawn in place
// about once a second on a terminal, else a line every few seconds.
type Load struct {
	w     io.Writer
	tty   bool
	quiet bool
	every time.Duration

	mu   sync.Mutex
	last time.Duration
	drew bool
}

// progressEvery is how often a line is written when not on a terminal.
const progressEvery = 5 * time.Second

// NewLoad returns a Load drawing on w; quiet draws nothing.
func NewLoad(w io.Writer, quiet bool) *Load {
	return &Load{w: w, tty: IsTerminal(w), quiet: quiet, every: progressEvery}
}

// Update draws pr; it is safe for concurrent use.
func (p *Load) Update(pr load.Progress) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.tty && pr.Elapsed-p.last < p.every && p.drew {
		return
	}
	p.last, p.drew = pr.Elapsed, true
	phase := ""
	if pr.Warmup {
		phase = " warm-up"
	}
	line := fmt.Sprintf("%6s%s  vus %d/%d  iterations %d (%.1f/s)  errors %d",
		pr.Elapsed.Round(time.Second), phase, pr.ActiveVUs, pr.VUs, pr.Iterations, pr.Rate, pr.Errors)
	if pr.Dropped > 0 {
		line += fmt.Sprintf("  dropped %d", pr.Dropped)
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// Done ends the line on a terminal.
func (p *Load) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drew && !p.quiet {
		fmt.Fprintln(p.w)
	}
}
