package stack

import (
	"context"
	"net/http"
	"time"

	"github.com/kcbench/kcbench/internal/kc"
)

// Status is what `kcbench status` shows of a local stack.
type Status struct {
	Name      string      `json:"name"`
	Dir       string      `json:"dir"`
	Detached  bool        `json:"detached"`
	Keycloak  ProcStatus  `json:"keycloak"`
	Postgres  *ProcStatus `json:"postgres,omitempty"`
	Version   string      `json:"keycloak_version"`
	Java      JDK         `json:"java"`
	URL       string      `json:"url"`
	MgmtURL   string      `json:"management_url"`
	DBURL     string      `json:"db_url"`
	Ready     bool        `json:"ready"`
	Listeners []Listener  `json:"listeners"`
	LastBoot  *BootResult `json:"last_boot,omitempty"`
	// Heap is the running JVM's maximum heap.
	Heap *Heap `json:"heap,omitempty"`
}

// ProcStatus describes one server process.
type ProcStatus struct {
	Version string        `json:"version,omitempty"`
	PID     int           `json:"pid"`
	Alive   bool          `json:"alive"`
	RSS     int64         `json:"rss_bytes"`
	CPU     time.Duration `json:"cpu_ns"`
	Uptime  time.Duration `json:"uptime_ns,omitempty"`
}

// Status reads the stack's processes and asks Keycloak whether it is ready.
func (s *Stack) Status(ctx context.Context) Status {
	st := Status{
		Name: s.st.Name, Dir: s.st.Dir, Detached: s.st.Detached,
		Version: s.st.Options.Version, Java: s.st.Java,
		URL: s.Target().BaseURL, MgmtURL: s.managementURL(), DBURL: s.st.DB.URL,
		LastBoot: s.st.LastBoot,
	}
	if n := s.st.Node; n != nil {
		st.Keycloak = ProcStatus{Version: s.st.Options.Version, PID: n.JVM.PID, Alive: n.JVM.Alive()}
		if st.Keycloak.Alive {
			st.Keycloak.RSS, _ = RSS(n.JVM.PID)
			st.Keycloak.CPU, _ = CPUTime(n.JVM.PID)
			st.Keycloak.Uptime = n.JVM.Uptime()
			if h, err := HeapInForce(n.JVM.PID); err == nil {
				st.Heap = &h
			}
		}
	}
	if pg := s.st.PG; pg != nil {
		ps := ProcStatus{Version: pg.Version, PID: pg.Proc.PID, Alive: pg.Proc.Alive()}
		if ps.Alive {
			ps.Uptime = pg.Proc.Uptime()
			for _, p := range pg.Proc.Members() {
				r, _ := RSS(p)
				ps.RSS += r
				c, _ := CPUTime(p)
				ps.CPU += c
			}
		}
		st.Postgres = &ps
	}
	if st.Keycloak.Alive {
		hc := &http.Client{Timeout: 3 * time.Second}
		st.Ready, _ = kc.Ready(ctx, hc, st.MgmtURL)
	}
	st.Listeners, _ = Listeners(s.Pids())
	return st
}
