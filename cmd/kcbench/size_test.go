package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kcbench/kcbench/internal/sizing"
)

// workedExample is the Keycloak 26 sizing guide's worked example.
var workedExample = []string{"size", "--logins", "45", "--client-credentials", "360", "--refresh", "360", "--logouts", "5", "--pods", "3"}

// calibratedFlags are CPU-ms figures as kcbench measures them.
var calibratedFlags = []string{"--login-cpu-ms", "77", "--cc-cpu-ms", "6.8", "--refresh-cpu-ms", "7.2"}

// sizeArgs is the worked example with the flags of extra given instead of
// its own (kcbench refuses a flag given twice).
func sizeArgs(extra ...string) []string {
	args := []string{"size"}
	for i := 1; i+1 < len(workedExample); i += 2 {
		if !slices.Contains(extra, workedExample[i]) {
			args = append(args, workedExample[i], workedExample[i+1])
		}
	}
	return append(args, extra...)
}

func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q\n%s", w, out)
		}
	}
}

func TestSizeWorkedExample(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, workedExample...)
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	if errs != "" {
		t.Errorf("stderr not empty: %s", errs)
	}
	mustContain(t, out,
		"Keycloak sizing for 45 logins/s, 360 client-credential grants/s, 360 refresh-token requests/s, 5 logouts/s",
		"45/s ÷ 15 per vCPU",
		"9 vCPU ÷ 3 pods",
		"= 3 vCPU",
		"3 vCPU × (1 + 150 %)",
		"= 7.5 vCPU",
		"(1,250 − 300) ÷ 0.7 = 1,357.143, rounded up to 10 MiB",
		"= 1,360 MiB",
		"site 1: 3 pods, each CPU 3 vCPU request / 7.5 vCPU limit, memory 1,250 MiB request / 1,360 MiB limit (heap max 952 MiB)",
		"database: about 1.4–2.8 vCPU plus 0.3 vCPU idle, about 5,700 write IOPS (410 session req/s)",
	)
	if strings.Contains(out, "ratio") {
		t.Errorf("a comparison without calibrated inputs:\n%s", out)
	}
}

// TestSizeFlagsReachInput checks each flag's wiring: the CLI's output is
// exactly what the sizing package renders for the Input the flags describe.
func TestSizeFlagsReachInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		edit func(*sizing.Input)
	}{
		{"worked example", nil, func(*sizing.Input) {}},
		{"headroom", []string{"--headroom", "100"}, func(in *sizing.Input) { in.HeadroomPct = 100 }},
		{"pods", []string{"--pods", "4"}, func(in *sizing.Input) { in.Pods = 4 }},
		{"two sites", []string{"--sites", "2"}, func(in *sizing.Input) { in.Sites = 2 }},
		{"half requests", []string{"--sites", "2", "--second-site", "half-requests"}, func(in *sizing.Input) {
			in.Sites, in.SecondSite = 2, sizing.SecondSiteHalfRequests
		}},
		{"half", []string{"--sites", "2", "--second-site", "half"}, func(in *sizing.Input) {
			in.Sites, in.SecondSite = 2, sizing.SecondSiteHalf
		}},
		{"concurrent clients", []string{"--concurrent-clients", "6000"}, func(in *sizing.Input) { in.ConcurrentClients = 6000 }},
		{"memory override", []string{"--memory-request-mib", "900"}, func(in *sizing.Input) {
			in.Memory.RequestMiB, in.Memory.Source = 900, sizing.MemoryOverrideSource
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := sizing.DefaultInput()
			in.LoginsPerSec, in.ClientCredentialsPerSec, in.RefreshesPerSec, in.LogoutsPerSec, in.Pods = 45, 360, 360, 5, 3
			c.edit(&in)
			r, err := sizing.Calculate(in)
			if err != nil {
				t.Fatal(err)
			}
			var want, wantK8s bytes.Buffer
			r.WriteText(&want)
			r.WriteK8s(&wantK8s)

			code, out, errs := runCLI(t, sizeArgs(c.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d\nstderr: %s", code, errs)
			}
			if out != want.String() {
				t.Errorf("text output differs from sizing's\ngot:\n%s\nwant:\n%s", out, want.String())
			}
			code, out, errs = runCLI(t, sizeArgs(slices.Concat(c.args, []string{"--k8s"})...)...)
			if code != exitOK {
				t.Fatalf("--k8s: exit %d\nstderr: %s", code, errs)
			}
			if out != wantK8s.String() {
				t.Errorf("--k8s output differs from sizing's\ngot:\n%s\nwant:\n%s", out, wantK8s.String())
			}
		})
	}
}

func TestSizeJSON(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, sizeArgs("--json")...)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	var r sizing.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(r.Sites) != 1 {
		t.Fatalf("sites: %+v", r.Sites)
	}
	p := r.Sites[0].Pod
	if p.CPURequest != 3000 || p.CPULimit != 7500 || p.MemoryRequest != 1250 || p.MemoryLimit != 1360 || p.HeapMax != 952 {
		t.Errorf("pod: %+v", p)
	}
	if r.Sites[0].Pods != 3 || r.Input.LoginsPerSec != 45 || r.Input.Rates.Source != sizing.GuideSource {
		t.Errorf("site %+v, input %+v", r.Sites[0], r.Input)
	}
	if r.CPU.TotalVCPU != 9 || r.Database.ApproxWriteIOPS != 5700 || len(r.Steps) == 0 {
		t.Errorf("cpu %+v, database %+v, %d steps", r.CPU, r.Database, len(r.Steps))
	}
	// The raw JSON uses the sizing package's field names.
	mustContain(t, out, `"cpu_request_millicores": 3000`, `"memory_limit_mib": 1360`)
}

func TestSizeK8s(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, sizeArgs("--k8s", "--concurrent-clients", "6000")...)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	mustContain(t, out,
		"instances: 3\n",
		"resources:\n  requests:\n    cpu: \"3\"\n    memory: \"1250Mi\"\n",
		"  limits:\n    cpu: \"7500m\"\n    memory: \"1360Mi\"\n",
		"additionalOptions:\n",
		"- name: cache-embedded-users-max-count\n    value: \"12000\"",
		"- name: cache-embedded-realms-max-count\n    value: \"24000\"",
	)
	// Without many clients, the default caches suffice: no options.
	_, out, _ = runCLI(t, sizeArgs("--k8s")...)
	if strings.Contains(out, "additionalOptions") {
		t.Errorf("cache options without --concurrent-clients:\n%s", out)
	}
}

func TestSizeCalibrated(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, sizeArgs(calibratedFlags...)...)
	if code != exitOK {
		t.Fatalf("exit %d\nstderr: %s", code, errs)
	}
	mustContain(t, out,
		// the calibrated sizing, with its arithmetic
		"Rates:  12.987 logins, 147.059 client-credential grants, 138.889 refreshes per vCPU (measured by kcbench)",
		"45/s ÷ 12.987 per vCPU",
		// the comparison with the guide
		"Keycloak 26 sizing guide  measured by kcbench  ratio",
		"×0.87", // logins per vCPU: 12.987 ÷ 15
		"×1.23", // client-credential grants per vCPU: 147.059 ÷ 120
		"×1.16", // CPU per login: 77 ÷ 66.667
		"×0.95", // cluster CPU: 8.505 ÷ 9
	)
	for _, row := range []string{"logins per vCPU", "CPU per login (ms)", "Keycloak CPU, cluster total", "CPU limit per pod", "memory limit per pod", "database write IOPS"} {
		if !strings.Contains(out, row) {
			t.Errorf("comparison lacks the row %q\n%s", row, out)
		}
	}

	code, out, errs = runCLI(t, sizeArgs(slices.Concat(calibratedFlags, []string{"--json"})...)...)
	if code != exitOK {
		t.Fatalf("--json: exit %d\nstderr: %s", code, errs)
	}
	var both struct {
		Guide            sizing.Result     `json:"guide"`
		Measured         sizing.Result     `json:"measured"`
		RatesComparison  sizing.Comparison `json:"rates_comparison"`
		SizingComparison sizing.Comparison `json:"sizing_comparison"`
	}
	if err := json.Unmarshal([]byte(out), &both); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if p := both.Guide.Sites[0].Pod; p.CPURequest != 3000 || p.CPULimit != 7500 {
		t.Errorf("guide pod: %+v", p)
	}
	if p := both.Measured.Sites[0].Pod; p.CPURequest != 2835 || p.CPULimit != 7088 {
		t.Errorf("measured pod: %+v", p)
	}
	if both.Measured.Input.Rates.Source != sizing.MeasuredSource || both.Guide.Input.Rates.Source != sizing.GuideSource {
		t.Errorf("sources: guide %q, measured %q", both.Guide.Input.Rates.Source, both.Measured.Input.Rates.Source)
	}
	if len(both.RatesComparison.Rows) == 0 || len(both.SizingComparison.Rows) == 0 {
		t.Fatalf("empty comparisons: %+v %+v", both.RatesComparison, both.SizingComparison)
	}
	if r := both.RatesComparison.Rows[0]; r.A != 15 || r.Ratio < 0.86 || r.Ratio > 0.87 {
		t.Errorf("logins row: %+v", r)
	}

	// --k8s with calibrated inputs writes the measured sizing.
	code, out, errs = runCLI(t, sizeArgs(slices.Concat(calibratedFlags, []string{"--k8s"})...)...)
	if code != exitOK {
		t.Fatalf("--k8s: exit %d\nstderr: %s", code, errs)
	}
	mustContain(t, out, "(measured by kcbench)", "requests:\n    cpu: \"2835m\"", "limits:\n    cpu: \"7088m\"")
}

func TestSizeUsageErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"negative logins", []string{"--logins", "-1"}, []string{"--logins", "between 0 and"}},
		{"negative refresh", []string{"--refresh", "-3"}, []string{"--refresh:"}},
		{"negative client credentials", []string{"--client-credentials", "-3"}, []string{"--client-credentials:"}},
		{"negative logouts", []string{"--logouts", "-3"}, []string{"--logouts:"}},
		{"not a number", []string{"--logins", "many"}, []string{"logins"}},
		{"NaN", []string{"--logins", "NaN"}, []string{"--logins:"}},
		{"zero pods", []string{"--pods", "0"}, []string{"--pods", "between 1 and"}},
		{"negative headroom", []string{"--headroom", "-10"}, []string{"--headroom:"}},
		{"three sites", []string{"--sites", "3"}, []string{"--sites", "1 or 2"}},
		{"unknown second site", []string{"--sites", "2", "--second-site", "third"}, []string{"second-site", "want same, half-requests or half"}},
		{"second site with one site", []string{"--second-site", "half"}, []string{"--second-site", "--sites 2"}},
		{"negative clients", []string{"--concurrent-clients", "-1"}, []string{"--concurrent-clients:"}},
		{"zero cpu-ms", []string{"--login-cpu-ms", "0", "--cc-cpu-ms", "6.8", "--refresh-cpu-ms", "7.2"}, []string{"--login-cpu-ms", "> 0"}},
		{"negative cpu-ms", []string{"--login-cpu-ms", "77", "--cc-cpu-ms", "-6.8", "--refresh-cpu-ms", "7.2"}, []string{"--cc-cpu-ms", "> 0"}},
		{"infinite cpu-ms", []string{"--login-cpu-ms", "77", "--cc-cpu-ms", "6.8", "--refresh-cpu-ms", "+Inf"}, []string{"--refresh-cpu-ms", "finite"}},
		{"one cpu-ms", []string{"--login-cpu-ms", "77"}, []string{"missing --cc-cpu-ms and --refresh-cpu-ms", "go together"}},
		{"two cpu-ms", []string{"--login-cpu-ms", "77", "--cc-cpu-ms", "6.8"}, []string{"missing --refresh-cpu-ms"}},
		{"memory below non-heap", []string{"--memory-request-mib", "300"}, []string{"--memory-request-mib", "non-heap"}},
		{"json and k8s", []string{"--json", "--k8s"}, []string{"--json and --k8s"}},
		{"stray argument", []string{"extra"}, []string{"unexpected arguments: extra"}},
		{"every problem at once", []string{"--logins", "-1", "--pods", "0", "--login-cpu-ms", "1"}, []string{"3 problems", "--logins", "--pods", "missing --cc-cpu-ms"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			code, out, errs := runCLI(t, sizeArgs(c.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, exitUsage, out, errs)
			}
			if out != "" {
				t.Errorf("stdout not empty: %s", out)
			}
			mustContain(t, errs, c.want...)
		})
	}
}

func TestSizeHelp(t *testing.T) {
	t.Parallel()
	code, out, errs := runCLI(t, "size", "-h")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errs)
	}
	mustContain(t, out,
		"Keycloak 26 sizing guide",
		"logins/s ÷ 15 + client-credential grants/s ÷ 120 + refreshes/s ÷ 120",
		"(request − 300 MiB non-heap) ÷ 0.7",
		"1000 ÷ CPU-ms",
		"--login-cpu-ms MS", "--second-site STRATEGY", "--headroom PCT", "(default 150)", "--k8s", "--json",
	)
	_, out, _ = runCLI(t, "--help")
	mustContain(t, out, "  size ")
}
