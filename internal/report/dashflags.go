package report

import (
	"bytes"
	"context"
	"flag"
	"os"
	"time"

	"github.com/kcbench/kcbench/internal/cliutil"
)

// DashboardFlags are --dashboard and --dashboard-allow-remote (load,
// capacity, experiment run, quickstart).
type DashboardFlags struct {
	addr   string
	remote bool
}

// RegisterFlags adds --dashboard and --dashboard-allow-remote.
func (d *DashboardFlags) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&d.addr, "dashboard", "", "serve a live view of the run at `HOST:PORT` (e.g. 127.0.0.1:8090): the report's page and charts, fed while the run goes, the final report at the end")
	fs.BoolVar(&d.remote, "dashboard-allow-remote", false, "allow --dashboard on an address other than loopback")
}

// Check checks the flags alone, right after parsing.
func (d *DashboardFlags) Check() error {
	if d.addr == "" {
		if d.remote {
			return cliutil.Usagef("--dashboard-allow-remote needs --dashboard")
		}
		return nil
	}
	if err := CheckDashboardAddr(d.addr, d.remote); err != nil {
		return cliutil.Usage(err)
	}
	return nil
}

// Start listens (a busy port or a non-loopback address is an error before
// the run starts); nil when --dashboard is not set.
func (d *DashboardFlags) Start(logf func(string, ...any), title string) (*Live, error) {
	if err := d.Check(); err != nil || d.addr == "" {
		return nil, err
	}
	l, err := ListenLive(d.addr, d.remote, title)
	if err != nil {
		return nil, cliutil.Usage(err)
	}
	logf("dashboard: %s", l.URL())
	return l, nil
}

// FinishLive shows the report at reportPath (none when empty) to an
// open page, then stops the dashboard.
func FinishLive(l *Live, reportPath string) {
	if l == nil {
		return
	}
	var html []byte
	if reportPath != "" {
		html, _ = os.ReadFile(reportPath) // unreadable: the page shows its last state
	}
	finishLive(l, html)
}

// FinishLiveDir shows an open page the report built from the results in
// dir, without writing it there (a load run's folder has no report of its
// own), then stops the dashboard. With no dir, or results it cannot read,
// the page keeps its last state, marked finished.
func FinishLiveDir(ctx context.Context, l *Live, dir string) {
	if l == nil {
		return
	}
	var html []byte
	if dir != "" {
		if m, err := Build(ctx, dir); err == nil {
			var b bytes.Buffer
			if m.WriteHTML(&b) == nil {
				html = b.Bytes()
			}
		}
	}
	finishLive(l, html)
}

func finishLive(l *Live, html []byte) {
	l.Finish(html, 3*time.Second)
	l.Close() //nolint:errcheck // the run's outcome matters, not the dashboard's
}
