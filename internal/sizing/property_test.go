package sizing

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// randomInput draws a valid input; the fixed seed keeps failures reproducible.
func randomInput(rng *rand.Rand) Input {
	in := DefaultInput()
	in.LoginsPerSec = math.Round(rng.Float64()*500*1000) / 1000
	in.ClientCredentialsPerSec = math.Round(rng.Float64()*3000*10) / 10
	in.RefreshesPerSec = math.Round(rng.Float64()*1000*10) / 10
	in.LogoutsPerSec = math.Round(rng.Float64()*50*10) / 10
	in.Pods = 1 + rng.IntN(12)
	in.HeadroomPct = float64(rng.IntN(300))
	in.ConcurrentClients = rng.IntN(20000)
	if rng.IntN(2) == 0 {
		in.Rates = RatesFromCPUms(5+rng.Float64()*200, 1+rng.Float64()*20, 1+rng.Float64()*20, "random")
	}
	return in
}

// outputs lists every number a sizing produces that must not fall when the
// load grows.
func outputs(r Result) map[string]float64 {
	p := r.Sites[0].Pod
	return map[string]float64{
		"cpu.total":          r.CPU.TotalVCPU,
		"pod.cpu_request":    float64(p.CPURequest),
		"pod.cpu_limit":      float64(p.CPULimit),
		"pod.memory_request": float64(p.MemoryRequest),
		"pod.memory_limit":   float64(p.MemoryLimit),
		"totals.cpu_limit":   float64(r.Totals.CPULimit),
		"db.requests":        r.Database.RequestsPerSec,
		"db.vcpu_min":        r.Database.VCPUMin,
		"db.vcpu_max":        r.Database.VCPUMax,
		"db.iops":            r.Database.WriteIOPS,
		"db.approx_vcpu_min": r.Database.ApproxVCPUMin,
		"db.approx_vcpu_max": r.Database.ApproxVCPUMax,
		"db.approx_iops":     r.Database.ApproxWriteIOPS,
	}
}

func TestMonotonicInEveryRate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	bumps := map[string]func(*Input, float64){
		"logins":             func(in *Input, d float64) { in.LoginsPerSec += d },
		"client_credentials": func(in *Input, d float64) { in.ClientCredentialsPerSec += d },
		"refreshes":          func(in *Input, d float64) { in.RefreshesPerSec += d },
		"logouts":            func(in *Input, d float64) { in.LogoutsPerSec += d },
	}
	for i := range 2000 {
		in := randomInput(rng)
		base := outputs(mustCalculate(t, in))
		for name, bump := range bumps {
			more := in
			bump(&more, []float64{0.001, 0.1, 1, 37, 1000}[i%5])
			got := outputs(mustCalculate(t, more))
			for k, v := range base {
				if got[k] < v {
					t.Fatalf("more %s lowered %s from %v to %v\ninput %+v", name, k, v, got[k], in)
				}
			}
		}
	}
}

func TestPodsDivideCPU(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		in := randomInput(rng)
		r := mustCalculate(t, in)
		totalMilli := r.CPU.TotalVCPU * 1000
		req := float64(r.Sites[0].Pod.CPURequest)
		// The request is the smallest whole millicore that covers total ÷ pods.
		if req*float64(in.Pods) < totalMilli-1e-6 || (req-1)*float64(in.Pods) >= totalMilli {
			t.Fatalf("pods=%d total=%vm: request %vm is not ceil(total/pods)", in.Pods, totalMilli, req)
		}
		// Doubling the pods halves the per-pod request, up to one millicore.
		twice := in
		twice.Pods *= 2
		half := float64(mustCalculate(t, twice).Sites[0].Pod.CPURequest)
		if math.Abs(half-req/2) > 1 {
			t.Fatalf("pods %d→%d: request %vm→%vm, want about half", in.Pods, twice.Pods, req, half)
		}
		// Memory does not depend on the pod count.
		if mustCalculate(t, twice).Sites[0].Pod.MemoryLimit != r.Sites[0].Pod.MemoryLimit {
			t.Fatalf("memory limit changed with the pod count")
		}
	}
}

func TestHeadroomScalesLimit(t *testing.T) {
	t.Parallel()
	in := workedExample()
	for _, tc := range []struct {
		headroom  float64
		wantLimit MilliCPU
	}{
		{0, 3000},
		{50, 4500},
		{100, 6000},
		{150, 7500},
		{200, 9000},
		{33.3333, 3000 + 1000}, // 3000 × 1.333333 = 3999.999 → 4000
	} {
		in.HeadroomPct = tc.headroom
		p := mustCalculate(t, in).Sites[0].Pod
		if p.CPURequest != 3000 {
			t.Errorf("headroom %v changed the request to %v", tc.headroom, p.CPURequest)
		}
		if p.CPULimit != tc.wantLimit {
			t.Errorf("headroom %v: limit = %v, want %v", tc.headroom, p.CPULimit, tc.wantLimit)
		}
	}

	rng := rand.New(rand.NewPCG(5, 6))
	for range 1000 {
		in := randomInput(rng)
		p := mustCalculate(t, in).Sites[0].Pod
		exact := float64(p.CPURequest) * (1 + in.HeadroomPct/100)
		if float64(p.CPULimit) < exact-1e-6 || float64(p.CPULimit-1) >= exact {
			t.Fatalf("headroom %v: limit %v is not ceil(%v × %v)", in.HeadroomPct, p.CPULimit, p.CPURequest, 1+in.HeadroomPct/100)
		}
		more := in
		more.HeadroomPct += 10
		if mustCalculate(t, more).Sites[0].Pod.CPULimit < p.CPULimit {
			t.Fatalf("more headroom lowered the limit")
		}
	}
}

func TestSecondSiteStrategies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		strategy       SiteStrategy
		request, limit MilliCPU
		failoverPods   int
		notes          int
	}{
		{SecondSiteSame, 3000, 7500, 0, 0},
		{SecondSiteHalfRequests, 1500, 7500, 0, 1},
		{SecondSiteHalf, 1500, 3750, 6, 1},
	} {
		t.Run(string(tc.strategy), func(t *testing.T) {
			t.Parallel()
			in := workedExample()
			in.Sites = 2
			in.SecondSite = tc.strategy
			r := mustCalculate(t, in)
			if len(r.Sites) != 2 {
				t.Fatalf("sites = %d, want 2", len(r.Sites))
			}
			one, two := r.Sites[0], r.Sites[1]
			if one.Pod != mustCalculate(t, workedExample()).Sites[0].Pod {
				t.Errorf("site 1 changed by adding a second site: %+v", one.Pod)
			}
			if two.Pods != one.Pods || two.Pod.MemoryRequest != one.Pod.MemoryRequest ||
				two.Pod.MemoryLimit != one.Pod.MemoryLimit || two.Pod.HeapMax != one.Pod.HeapMax {
				t.Errorf("site 2 must have site 1's pods and memory: %+v vs %+v", two, one)
			}
			if two.Pod.CPURequest != tc.request || two.Pod.CPULimit != tc.limit {
				t.Errorf("site 2 CPU = %v/%v, want %v/%v", two.Pod.CPURequest, two.Pod.CPULimit, tc.request, tc.limit)
			}
			if two.FailoverPods != tc.failoverPods || two.Strategy != tc.strategy {
				t.Errorf("site 2 = %+v, want failover pods %d, strategy %s", two, tc.failoverPods, tc.strategy)
			}
			if len(r.Notes) != tc.notes {
				t.Errorf("notes = %q, want %d", r.Notes, tc.notes)
			}
			// The database is shared: unchanged by the second site.
			if r.Database != mustCalculate(t, workedExample()).Database {
				t.Errorf("database changed with a second site")
			}
			wantTotals := Totals{
				Pods:          6,
				CPURequest:    3*3000 + 3*tc.request,
				CPULimit:      3*7500 + 3*tc.limit,
				MemoryRequest: 6 * 1250,
				MemoryLimit:   6 * 1360,
			}
			if r.Totals != wantTotals {
				t.Errorf("totals = %+v, want %+v", r.Totals, wantTotals)
			}
		})
	}
	// With one site the strategy is ignored.
	in := workedExample()
	in.SecondSite = SecondSiteHalf
	if r := mustCalculate(t, in); len(r.Sites) != 1 {
		t.Errorf("one site gave %d sites", len(r.Sites))
	}
}

func TestMemory(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                 string
		mem                  Memory
		request, limit, heap MiB
		initial              MiB
		notes                int
	}{
		{"guide", GuideMemory(), 1250, 1360, 952, 680, 0},
		{"exact multiple", Memory{RequestMiB: 1000, NonHeapMiB: 300, HeapPct: 70}, 1000, 1000, 700, 500, 0},
		{"below 1000 raised to request", Memory{RequestMiB: 800, NonHeapMiB: 300, HeapPct: 70}, 800, 800, 560, 400, 1},
		{"fractional request", Memory{RequestMiB: 2000.2, NonHeapMiB: 300, HeapPct: 70}, 2001, 2430, 1701, 1215, 0},
		{"heap 75 %", Memory{RequestMiB: 1800, NonHeapMiB: 300, HeapPct: 75}, 1800, 2000, 1500, 1000, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := workedExample()
			in.Memory = tc.mem
			r := mustCalculate(t, in)
			p := r.Sites[0].Pod
			if p.MemoryRequest != tc.request || p.MemoryLimit != tc.limit || p.HeapMax != tc.heap || p.HeapInitial != tc.initial {
				t.Errorf("memory = %v/%v heap %v/%v, want %v/%v heap %v/%v",
					p.MemoryRequest, p.MemoryLimit, p.HeapMax, p.HeapInitial, tc.request, tc.limit, tc.heap, tc.initial)
			}
			if p.MemoryLimit%MemoryLimitStepMiB != 0 && p.MemoryLimit != p.MemoryRequest {
				t.Errorf("limit %v is not a multiple of %d MiB", p.MemoryLimit, MemoryLimitStepMiB)
			}
			// Heap plus non-heap under the limit covers the request.
			if float64(p.HeapMax)+tc.mem.NonHeapMiB < float64(p.MemoryRequest)-1 {
				t.Errorf("heap %v + non-heap %v < request %v", p.HeapMax, tc.mem.NonHeapMiB, p.MemoryRequest)
			}
			if len(r.Notes) != tc.notes {
				t.Errorf("notes = %q, want %d", r.Notes, tc.notes)
			}
		})
	}
}

func TestCaches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		clients       int
		raise         bool
		users, realms int
	}{
		{0, false, 10000, 10000},
		{2500, false, 10000, 10000},
		{2501, true, 10000, 10004},
		{4000, true, 10000, 16000},
		{5000, true, 10000, 20000},
		{6000, true, 12000, 24000},
		{50000, true, 100000, 200000},
	} {
		in := workedExample()
		in.ConcurrentClients = tc.clients
		c := mustCalculate(t, in).Caches
		if c.Raise != tc.raise || c.UsersMaxCount != tc.users || c.RealmsMaxCount != tc.realms || c.ConcurrentClients != tc.clients {
			t.Errorf("%d clients: caches = %+v, want raise=%v users=%d realms=%d", tc.clients, c, tc.raise, tc.users, tc.realms)
		}
		if tc.raise {
			want := []string{
				"--cache-embedded-users-max-count=" + strconv.Itoa(tc.users),
				"--cache-embedded-realms-max-count=" + strconv.Itoa(tc.realms),
			}
			if len(c.Options) != 2 || c.Options[0].Flag() != want[0] || c.Options[1].Flag() != want[1] {
				t.Errorf("%d clients: options = %+v, want %q", tc.clients, c.Options, want)
			}
		} else if len(c.Options) != 0 {
			t.Errorf("%d clients: options = %+v, want none", tc.clients, c.Options)
		}
	}
}

func TestExtrapolationNotes(t *testing.T) {
	t.Parallel()
	in := workedExample()
	in.LoginsPerSec, in.ClientCredentialsPerSec, in.RefreshesPerSec = 301, 2001, 436
	if n := len(mustCalculate(t, in).Notes); n != 3 {
		t.Errorf("guide rates beyond the tested loads: %d notes, want 3", n)
	}
	in.Rates = RatesFromCPUms(60, 8, 8, "measured")
	if n := len(mustCalculate(t, in).Notes); n != 0 {
		t.Errorf("measured rates: %d notes, want 0", n)
	}
	in = DefaultInput()
	if n := len(mustCalculate(t, in).Notes); n != 1 {
		t.Errorf("no load: %d notes, want 1", n)
	}
}

func TestRatesFromCPUms(t *testing.T) {
	t.Parallel()
	r := RatesFromCPUms(1000.0/15, 1000.0/120, 1000.0/120, GuideSource)
	g := GuideRates()
	if !near(r.LoginsPerVCPU, g.LoginsPerVCPU) || !near(r.ClientCredentialsPerVCPU, g.ClientCredentialsPerVCPU) ||
		!near(r.RefreshesPerVCPU, g.RefreshesPerVCPU) {
		t.Errorf("RatesFromCPUms(guide ms) = %+v, want %+v", r, g)
	}
	l, c, f := RatesFromCPUms(77, 6.8, 7.2, "x").CPUms()
	if !near(l, 77) || !near(c, 6.8) || !near(f, 7.2) {
		t.Errorf("CPUms round trip = %v, %v, %v", l, c, f)
	}
	for _, ms := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		r := RatesFromCPUms(ms, 7, 7, "bad")
		if r.LoginsPerVCPU != 0 {
			t.Errorf("RatesFromCPUms(%v) login rate = %v, want 0", ms, r.LoginsPerVCPU)
		}
		if r.Validate() == nil {
			t.Errorf("RatesFromCPUms(%v) validated", ms)
		}
	}
}

func TestTruncPlaces(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		x      float64
		places int
		want   float64
	}{
		{1.435, 1, 1.4},
		{2.87, 1, 2.8},
		{5740, -2, 5700},
		{4 * 0.7, 1, 2.8}, // 2.7999999999999998 must not fall to 2.7
		{0.1 + 0.2, 1, 0.3},
		{0.099, 1, 0},
		{0, 1, 0},
		{10710, -2, 10700},
		{143.5, 1, 143.5},
	} {
		if got := truncPlaces(tc.x, tc.places); got != tc.want {
			t.Errorf("truncPlaces(%v, %d) = %v, want %v", tc.x, tc.places, got, tc.want)
		}
	}
}

func TestQuantities(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got, want string
	}{
		{MilliCPU(3000).String(), "3"},
		{MilliCPU(7500).String(), "7500m"},
		{MilliCPU(1).String(), "1m"},
		{MilliCPU(0).String(), "0"},
		{MiB(1360).String(), "1360Mi"},
		{num(1357.142857), "1,357.143"},
		{num(5700), "5,700"},
		{num(1234567.5), "1,234,567.5"},
		{num(0.35), "0.35"},
		{num(-1250), "-1,250"},
		{num(-0.0001), "0"},
		{num(999), "999"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestSiteStrategyText(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"same", "half-requests", "half"} {
		var v SiteStrategy
		if err := v.UnmarshalText([]byte(s)); err != nil || string(v) != s {
			t.Errorf("UnmarshalText(%q) = %q, %v", s, v, err)
		}
		b, _ := v.MarshalText()
		if string(b) != s {
			t.Errorf("MarshalText = %q, want %q", b, s)
		}
	}
	for _, s := range []string{"", "Same", "double", "half "} {
		var v SiteStrategy
		if err := v.UnmarshalText([]byte(s)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted", s)
		}
	}
}
