package sizing

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kcbench/kcbench/internal/results"
)

// tp is a finished point with a warm token and admin workload.
func tp(mode string, n int, tokenP95, adminP95 time.Duration, readyRSS float64) TenantPoint {
	return TenantPoint{
		Point: fmt.Sprintf("default-%s-n%05d-r1", mode, n), Variant: "default", Mode: mode, Tenants: n, Repeat: 1, Status: "done",
		ReadyRSSMiB: readyRSS, MaxRSSMiB: readyRSS + 50,
		Workloads: []TenantWorkload{
			{Name: "token", Scenario: "client-credentials", Phase: results.PhaseWarm, Iterations: 1000,
				Ops: []OpLatency{{Op: "client_credentials", Count: 1000, P95: tokenP95}}},
			{Name: "admin", Scenario: "admin-api", Phase: results.PhaseWarm, Iterations: 100,
				Ops: []OpLatency{{Op: "admin_list_realms", Count: 100, P95: adminP95}, {Op: "admin_get_realm", Count: 100, P95: adminP95 / 2}}},
			{Name: "jwks", Scenario: "jwks", Phase: results.PhaseWarm, Iterations: 100,
				Ops: []OpLatency{{Op: "jwks", Count: 100, P95: 10 * time.Second}}}, // no objective
			{Name: "admin", Scenario: "admin-api", Phase: results.PhaseCold, Iterations: 10,
				Ops: []OpLatency{{Op: "admin_list_realms", Count: 10, P95: 30 * time.Second}}}, // cold: not checked by default
		},
	}
}

func testSLO() SLO {
	s := defaultSLO()
	s.MemoryLimitMiB = 2000
	return s
}

func TestOpKind(t *testing.T) {
	t.Parallel()
	for op, want := range map[string]string{
		"admin_list_realms": OpKindAdmin, "admin_list_members": OpKindAdmin, "client_credentials": OpKindToken,
		"password_grant": OpKindToken, "refresh": OpKindToken, "code_exchange": OpKindToken, "jwks": "", "login_page": "", "iteration": "",
	} {
		if got := OpKind(op); got != want {
			t.Errorf("OpKind(%q) = %q, want %q", op, got, want)
		}
	}
}

func TestMemoryLimitMatchesCalculate(t *testing.T) {
	t.Parallel()
	if got := GuideMemory().LimitMiB(); got != 1360 {
		t.Errorf("guide limit = %d, want 1360", got)
	}
	for _, req := range []float64{301, 900, 1000, 1250, 1250.5, 2048, 4000, 12345.6} {
		for _, heap := range []float64{50, 70, 100} {
			in := workedExample()
			in.Memory.RequestMiB, in.Memory.HeapPct = req, heap
			r := mustCalculate(t, in)
			if got, want := in.Memory.LimitMiB(), r.Sites[0].Pod.MemoryLimit; got != want {
				t.Errorf("request %v, heap %v %%: LimitMiB() = %d, Calculate = %d", req, heap, got, want)
			}
		}
	}
}

func TestTenantCapacities(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	cases := []struct {
		name        string
		pts         []TenantPoint
		slo         SLO
		maxHeld     int
		firstBroken int
		broke       []string // SLOs at the first break
		check       func(t *testing.T, c TenantCapacity)
	}{
		{name: "held everywhere", pts: []TenantPoint{tp("realms", 1, 50*ms, 100*ms, 600), tp("realms", 10, 60*ms, 150*ms, 700)},
			slo: testSLO(), maxHeld: 10},
		{name: "admin p95 breaks first", pts: []TenantPoint{
			tp("realms", 100, 50*ms, 400*ms, 800), tp("realms", 10, 50*ms, 100*ms, 700), tp("realms", 500, 90*ms, 1500*ms, 1200),
			tp("realms", 1000, 600*ms, 3*time.Second, 2500),
		}, slo: testSLO(), maxHeld: 100, firstBroken: 500, broke: []string{SLOAdminP95},
			check: func(t *testing.T, c TenantCapacity) {
				want := map[string]int{SLOAdminP95: 500, SLOTokenP95: 1000, SLOReadyRSS: 1000, SLOMaxRSS: 1000}
				if fmt.Sprint(c.FirstBreak) != fmt.Sprint(want) {
					t.Errorf("first break %v, want %v", c.FirstBreak, want)
				}
				if c.RSSPerTenantMiB < 1.78 || c.RSSPerTenantMiB > 1.79 { // least squares by hand: 1094000 / 612075
					t.Errorf("RSS per tenant %v", c.RSSPerTenantMiB)
				}
				if c.RSSLimitAtTenant <= 500 || c.RSSLimitAtTenant >= 1000 {
					t.Errorf("RSS reaches the limit at %v tenants", c.RSSLimitAtTenant)
				}
			}},
		{name: "memory: RSS at ready over the limit", pts: []TenantPoint{tp("orgs", 1, 50*ms, 100*ms, 1900), tp("orgs", 10, 50*ms, 100*ms, 2100)},
			slo: testSLO(), maxHeld: 1, firstBroken: 10, broke: []string{SLOReadyRSS, SLOMaxRSS}},
		{name: "max RSS only", pts: []TenantPoint{tp("orgs", 1, 50*ms, 100*ms, 1980)}, slo: testSLO(), maxHeld: 0, firstBroken: 1, broke: []string{SLOMaxRSS}},
		{name: "aborted point", pts: func() []TenantPoint {
			p := tp("realms", 40, 50*ms, 100*ms, 700)
			p.Status, p.Reason = "aborted", "Keycloak RSS 12289 MiB above the limit 12GiB"
			return []TenantPoint{tp("realms", 10, 50*ms, 100*ms, 650), p}
		}(), slo: testSLO(), maxHeld: 10, firstBroken: 40, broke: []string{SLOPointDone}},
		{name: "errors", pts: func() []TenantPoint {
			p := tp("realms", 40, 50*ms, 100*ms, 700)
			p.Workloads[0].Errors = 20 // 2 %
			return []TenantPoint{p}
		}(), slo: testSLO(), firstBroken: 40, broke: []string{SLOErrors}},
		{name: "worst repeat counts", pts: func() []TenantPoint {
			a, b := tp("realms", 10, 50*ms, 100*ms, 700), tp("realms", 10, 700*ms, 100*ms, 700)
			b.Point, b.Repeat = "default-realms-n00010-r2", 2
			return []TenantPoint{a, b}
		}(), slo: testSLO(), firstBroken: 10, broke: []string{SLOTokenP95},
			check: func(t *testing.T, c TenantCapacity) {
				if ch := c.Checks[0]; len(ch.Points) != 2 || ch.TokenP95 != 700*ms {
					t.Errorf("check %+v", ch)
				}
			}},
		{name: "held again is noted", pts: []TenantPoint{
			tp("realms", 1, 50*ms, 100*ms, 600), tp("realms", 10, 900*ms, 100*ms, 600), tp("realms", 20, 50*ms, 100*ms, 600),
		}, slo: testSLO(), maxHeld: 1, firstBroken: 10, broke: []string{SLOTokenP95},
			check: func(t *testing.T, c TenantCapacity) {
				if len(c.Notes) != 1 {
					t.Errorf("notes %q", c.Notes)
				}
			}},
		{name: "cold phase checked on request", pts: []TenantPoint{tp("realms", 1, 50*ms, 100*ms, 600)},
			slo: func() SLO { s := testSLO(); s.Phase = results.PhaseCold; return s }(), firstBroken: 1, broke: []string{SLOAdminP95}},
		{name: "all phases", pts: []TenantPoint{tp("realms", 1, 50*ms, 100*ms, 600)},
			slo: func() SLO { s := testSLO(); s.Phase = ""; return s }(), firstBroken: 1, broke: []string{SLOAdminP95}},
		{name: "zero bounds are not checked", pts: []TenantPoint{tp("realms", 1, 5*time.Second, 5*time.Second, 600)},
			slo: func() SLO { s := testSLO(); s.AdminP95, s.TokenP95 = 0, 0; return s }(), maxHeld: 1},
		{name: "no warm phase falls back to all", pts: func() []TenantPoint {
			p := tp("realms", 1, 50*ms, 100*ms, 600)
			p.Workloads = p.Workloads[3:] // the cold admin only
			return []TenantPoint{p}
		}(), slo: testSLO(), firstBroken: 1, broke: []string{SLOAdminP95},
			check: func(t *testing.T, c TenantCapacity) {
				if len(c.Notes) != 1 {
					t.Errorf("notes %q", c.Notes)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			caps, err := TenantCapacities(c.pts, c.slo)
			if err != nil {
				t.Fatal(err)
			}
			if len(caps) != 1 {
				t.Fatalf("%d capacities", len(caps))
			}
			got := caps[0]
			if got.MaxHeld != c.maxHeld || got.FirstBroken != c.firstBroken {
				t.Errorf("max held %d, first broken %d; want %d, %d (%+v)", got.MaxHeld, got.FirstBroken, c.maxHeld, c.firstBroken, got.Checks)
			}
			var broke []string
			for _, v := range got.BrokeFirst {
				if !slices.Contains(broke, v.SLO) {
					broke = append(broke, v.SLO)
				}
			}
			if !slices.Equal(broke, c.broke) {
				t.Errorf("broke first: %q, want %q (%+v)", broke, c.broke, got.BrokeFirst)
			}
			if c.check != nil {
				c.check(t, got)
			}
		})
	}
}

func TestTenantCapacitiesInvalid(t *testing.T) {
	t.Parallel()
	if _, err := TenantCapacities(nil, defaultSLO()); !errors.Is(err, ErrNoTenantPoints) {
		t.Errorf("no points: %v", err)
	}
	bad := SLO{AdminP95: -1, TokenP95: -1, MemoryLimitMiB: 0, MaxErrorRate: 2, Phase: "hot"}
	_, err := TenantCapacities([]TenantPoint{tp("realms", 1, 0, 0, 1)}, bad)
	if !errors.Is(err, ErrInvalidInput) {
		t.Fatalf("err = %v", err)
	}
	var n int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *FieldError
		if errors.As(e, &fe) {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d field errors, want 5: %v", n, err)
	}
}

func TestTenantsGolden(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	pts := []TenantPoint{
		tp("realms", 1, 40*ms, 90*ms, 610), tp("realms", 100, 60*ms, 300*ms, 900), tp("realms", 500, 80*ms, 1200*ms, 1500),
		tp("realms", 1000, 700*ms, 2500*ms, 2300),
		tp("orgs", 1, 40*ms, 80*ms, 600), tp("orgs", 100, 45*ms, 90*ms, 640), tp("orgs", 500, 50*ms, 110*ms, 700),
		tp("orgs", 1000, 55*ms, 130*ms, 760),
	}
	slo := defaultSLO()
	slo.MemoryLimitMiB = 2048
	caps, err := TenantCapacities(pts, slo)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTenantsText(&b, caps, slo); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, filepath.Join("testdata", "tenants.txt"), b.Bytes())
}

// defaultSLO is the SLO of the CLI's defaults: admin p95 < 1 s, token p95
// < 500 ms, at most 1 % failed iterations, checked on the warm phase, RSS
// under the memory limit the guide gives a pod.
func defaultSLO() SLO {
	return SLO{AdminP95: DefaultSLOAdminP95, TokenP95: DefaultSLOTokenP95, MemoryLimitMiB: float64(GuideMemory().LimitMiB()),
		MaxErrorRate: DefaultSLOMaxErrorRate, Phase: DefaultSLOPhase}
}
