package sizing

import (
	"errors"
	"math"
	"slices"
	"testing"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		change func(*Input)
		fields []string // every field Validate must report, in order
	}{
		{"default input is valid", func(*Input) {}, nil},
		{"worked example is valid", func(in *Input) { *in = workedExample() }, nil},
		{"zero headroom is valid", func(in *Input) { in.HeadroomPct = 0 }, nil},
		{"one site ignores an empty strategy", func(in *Input) { in.SecondSite = "" }, nil},
		{"negative logins", func(in *Input) { in.LoginsPerSec = -1 }, []string{"logins_per_sec"}},
		{"NaN grants", func(in *Input) { in.ClientCredentialsPerSec = math.NaN() }, []string{"client_credentials_per_sec"}},
		{"infinite refreshes", func(in *Input) { in.RefreshesPerSec = math.Inf(1) }, []string{"refreshes_per_sec"}},
		{"negative logouts", func(in *Input) { in.LogoutsPerSec = -0.5 }, []string{"logouts_per_sec"}},
		{"zero pods", func(in *Input) { in.Pods = 0 }, []string{"pods"}},
		{"negative headroom", func(in *Input) { in.HeadroomPct = -10 }, []string{"headroom_pct"}},
		{"zero sites", func(in *Input) { in.Sites = 0 }, []string{"sites"}},
		{"three sites", func(in *Input) { in.Sites = 3 }, []string{"sites"}},
		{"two sites without strategy", func(in *Input) { in.Sites, in.SecondSite = 2, "" }, []string{"second_site"}},
		{"unknown strategy", func(in *Input) { in.SecondSite = "double" }, []string{"second_site"}},
		{"negative clients", func(in *Input) { in.ConcurrentClients = -1 }, []string{"concurrent_clients"}},
		{"zero rates", func(in *Input) { in.Rates = Rates{} },
			[]string{"rates.logins_per_vcpu", "rates.client_credentials_per_vcpu", "rates.refreshes_per_vcpu"}},
		{"negative rate", func(in *Input) { in.Rates.RefreshesPerVCPU = -120 }, []string{"rates.refreshes_per_vcpu"}},
		{"zero memory", func(in *Input) { in.Memory = Memory{} }, []string{"memory.request_mib", "memory.heap_pct"}},
		{"non-heap above request", func(in *Input) { in.Memory.NonHeapMiB = 1250 }, []string{"memory.non_heap_mib"}},
		{"negative non-heap", func(in *Input) { in.Memory.NonHeapMiB = -1 }, []string{"memory.non_heap_mib"}},
		{"heap over 100 %", func(in *Input) { in.Memory.HeapPct = 101 }, []string{"memory.heap_pct"}},
		{"zero input reports all", func(in *Input) { *in = Input{} }, []string{
			"pods", "sites",
			"rates.logins_per_vcpu", "rates.client_credentials_per_vcpu", "rates.refreshes_per_vcpu",
			"memory.request_mib", "memory.heap_pct",
		}},
		{"several problems at once", func(in *Input) {
			in.LoginsPerSec, in.Pods, in.HeadroomPct, in.Sites = -1, -3, math.NaN(), 2
			in.SecondSite = "twice"
		}, []string{"logins_per_sec", "pods", "headroom_pct", "second_site"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := DefaultInput()
			tc.change(&in)
			before := in
			err := in.Validate()
			if got := fields(t, err); !slices.Equal(got, tc.fields) {
				t.Errorf("Validate() fields = %q, want %q\nerror: %v", got, tc.fields, err)
			}
			if !sameInput(before, in) {
				t.Errorf("Validate changed the input")
			}
			r, cerr := Calculate(in)
			if (err == nil) != (cerr == nil) {
				t.Errorf("Validate() = %v but Calculate() = %v", err, cerr)
			}
			if cerr != nil {
				if !errors.Is(cerr, ErrInvalidInput) {
					t.Errorf("Calculate error %v is not ErrInvalidInput", cerr)
				}
				if len(r.Sites) != 0 || r.Steps != nil {
					t.Errorf("Calculate returned a result with an error: %+v", r)
				}
			}
		})
	}
}

// fields returns the Field of every *FieldError joined in err.
func fields(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("%v does not match ErrInvalidInput", err)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("%T is not a joined error", err)
	}
	var out []string
	for _, e := range joined.Unwrap() {
		var fe *FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a *FieldError", e)
		}
		if fe.Problem == "" || fe.Error() != fe.Field+": "+fe.Problem {
			t.Errorf("bad FieldError %#v", fe)
		}
		out = append(out, fe.Field)
	}
	return out
}

// sameInput compares inputs, treating NaN as equal to NaN.
func sameInput(a, b Input) bool {
	eq := func(x, y float64) bool { return x == y || (math.IsNaN(x) && math.IsNaN(y)) }
	return eq(a.LoginsPerSec, b.LoginsPerSec) && eq(a.ClientCredentialsPerSec, b.ClientCredentialsPerSec) &&
		eq(a.RefreshesPerSec, b.RefreshesPerSec) && eq(a.LogoutsPerSec, b.LogoutsPerSec) &&
		a.Pods == b.Pods && eq(a.HeadroomPct, b.HeadroomPct) && a.Sites == b.Sites &&
		a.SecondSite == b.SecondSite && a.ConcurrentClients == b.ConcurrentClients &&
		a.Rates == b.Rates && a.Memory == b.Memory
}
