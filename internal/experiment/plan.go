package experiment

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/stack"
)

// Point is one cell of the matrix.
type Point struct {
	// ID is stable and is the point's folder name.
	ID      string
	Variant Variant
	Mode    dataset.Mode
	Tenants int
	Repeat  int // 1-based
	// Stack is the stack config of the point's variant (Dirs, Name, Logf
	// are the runner's business).
	Stack stack.KeycloakOptions
	PG    string
	Spec  dataset.Spec
}

// Params are the point's coordinates, as results record them.
func (p Point) Params() map[string]string {
	return map[string]string{"mode": string(p.Mode), "tenants": fmt.Sprint(p.Tenants), "variant": p.Variant.Name, "repeat": fmt.Sprint(p.Repeat)}
}

// Plan lists the points in the order the runner takes them: by variant,
// then mode, then tenant count ascending (so that a dataset grows), then
// repeat. It is pure and deterministic.
func Plan(f *File) ([]Point, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	tenants := slices.Clone(f.Dataset.Tenants)
	content := dataset.DefaultContent
	if f.Dataset.Preset != "" {
		p, _ := dataset.LookupPreset(f.Dataset.Preset)
		content = p.Content
		if len(tenants) == 0 {
			tenants = []int{p.Tenants}
		}
	}
	if f.Dataset.Users > 0 {
		content.Users = f.Dataset.Users
	}
	if f.Dataset.Clients > 0 {
		content.Clients = f.Dataset.Clients
	}
	slices.Sort(tenants)
	tenants = slices.Compact(tenants)
	var pts []Point
	for _, v := range f.Variants {
		ko := stack.KeycloakOptions{
			Version: f.Stack.KeycloakVersion, JavaHome: f.Stack.JavaHome, Heap: f.Stack.Heap,
			HTTPThreads: f.Stack.HTTPThreads, DBPoolSize: f.Stack.DBPoolSize,
			CacheSizes: f.Stack.CacheSizes, BuildOptions: f.Stack.BuildOptions, ExtraOptions: f.Stack.Options,
		}
		policy := f.Dataset.PasswordPolicy
		if v.KeycloakVersion != "" {
			ko.Version = v.KeycloakVersion
		}
		if v.Heap != "" {
			ko.Heap = v.Heap
		}
		if v.HTTPThreads != 0 {
			ko.HTTPThreads = v.HTTPThreads
		}
		if v.DBPoolSize != 0 {
			ko.DBPoolSize = v.DBPoolSize
		}
		if v.CacheSizes != nil {
			ko.CacheSizes = v.CacheSizes
		}
		if v.Options != nil {
			ko.ExtraOptions = append(slices.Clone(ko.ExtraOptions), v.Options...)
		}
		if v.PasswordPolicy != "" {
			policy = v.PasswordPolicy
		}
		pol, _ := dataset.ParsePolicy(policy)
		for _, m := range f.Dataset.Modes {
			mode := dataset.Mode(m)
			for _, n := range tenants {
				for r := 1; r <= f.Repeats; r++ {
					spec := dataset.Spec{Mode: mode, Tenants: n, Content: content, Policy: pol, Prefix: "kcb", Seed: int64(f.Seed)}
					id := fmt.Sprintf("%s-%s-n%05d-r%d", v.Name, mode, n, r)
					pts = append(pts, Point{ID: id, Variant: v, Mode: mode, Tenants: n, Repeat: r, Stack: ko, PG: f.Stack.PGVersion, Spec: spec})
				}
			}
		}
	}
	return pts, nil
}

// Estimate guesses a point's duration: boot, phases, and seeding at the
// rates measured on a 2-core box (about 0.5 s of server time per realm
// tenant, 0.05 s per organization tenant, growing with the realm count).
// scale multiplies the phases as Runner.Scale does (0: 1).
func Estimate(f *File, pts []Point, scale float64) time.Duration {
	if scale <= 0 {
		scale = 1
	}
	sc := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	var total time.Duration
	prev := map[string]int{}
	for _, p := range pts {
		key := p.Variant.Name + "/" + string(p.Mode)
		added := p.Tenants - prev[key]
		if added < 0 {
			added = p.Tenants
		}
		prev[key] = p.Tenants
		if p.Repeat == 1 {
			per := 50 * time.Millisecond
			if p.Mode == dataset.ModeRealms {
				per = 500*time.Millisecond + time.Duration(p.Tenants)*2*time.Millisecond
			}
			total += time.Duration(added) * per
		}
		total += 15 * time.Second // boot
		for _, ph := range f.Phases {
			if ph == "warm" {
				total += sc(f.Warmup.Duration)
			}
			for _, w := range f.Workload {
				if w.Capacity == nil {
					c := w.Config.Scaled(scale)
					total += c.Total()
				}
			}
		}
		for _, w := range f.Workload {
			if w.Capacity != nil {
				total += w.Capacity.estimate(scale)
			}
		}
	}
	return total
}

// WritePlan prints the plan as a table with the estimate at scale.
func WritePlan(w io.Writer, f *File, pts []Point, scale float64) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "point\tvariant\tmode\ttenants\trepeat\tkeycloak\tpassword policy\n")
	for _, p := range pts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", p.ID, p.Variant.Name, p.Mode, p.Tenants, p.Repeat, p.Stack.Version, p.Spec.Policy)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	searches := 0
	for _, wl := range f.Workload {
		if wl.Capacity != nil {
			searches++
		}
	}
	what := fmt.Sprintf("phases %v; %d workloads per phase", f.Phases, len(f.Workload)-searches)
	if searches > 0 {
		what += fmt.Sprintf(", then %d capacity searches", searches)
	}
	fmt.Fprintf(w, "\n%d points; %s; estimated %s (2-core box)\n", len(pts), what, Estimate(f, pts, scale).Round(time.Minute))
	return nil
}
