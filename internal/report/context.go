package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// machineText describes the machines the points ran on.
func machineText(ps []*results.Point) string {
	var ms []string
	for _, p := range ps {
		m := p.Manifest.Machine
		cpu := m.CPUModel
		if cpu == "" {
			cpu = "unknown CPU"
		}
		s := cpu
		if m.Cores > 0 {
			s += fmt.Sprintf(", %d cores", m.Cores)
		}
		if m.RAMBytes > 0 {
			s += fmt.Sprintf(", %.1f GiB RAM", float64(m.RAMBytes)/(1<<30))
		}
		if m.Kernel != "" {
			s += ", Linux " + m.Kernel
		}
		if p.Manifest.External {
			s = "external target; load from " + s
		}
		if !slices.Contains(ms, s) {
			ms = append(ms, s)
		}
	}
	if len(ms) == 0 {
		return "machine unknown"
	}
	return strings.Join(ms, " | ")
}

// versionsText lists the versions of the software under test.
func versionsText(ps []*results.Point) string {
	var kc, java, pg, kcb []string
	add := func(l *[]string, v string) {
		if v != "" && !slices.Contains(*l, v) {
			*l = append(*l, v)
		}
	}
	for _, p := range ps {
		add(&kc, p.Manifest.Keycloak)
		add(&java, p.Manifest.Java)
		add(&pg, p.Manifest.Postgres)
		add(&kcb, p.Manifest.Kcbench)
	}
	var parts []string
	one := func(name string, l []string) {
		if len(l) > 0 {
			parts = append(parts, name+" "+strings.Join(l, " / "))
		}
	}
	one("Keycloak", kc)
	one("Java", java)
	one("PostgreSQL", pg)
	one("kcbench", kcb)
	if len(parts) == 0 {
		return "versions unknown"
	}
	return strings.Join(parts, ", ")
}

// experimentModels lists the load models of every workload.
func experimentModels(ps []*results.Point) string {
	var ms []string
	for _, p := range ps {
		for _, w := range p.Summary.Workloads {
			ms = appendModelName(ms, string(w.Stats.Model))
		}
		if len(p.Summary.Capacity) > 0 {
			ms = appendModelName(ms, "open") // constant-arrival-rate steps
		}
	}
	return modelsText(ms)
}

func appendModelName(ms []string, m string) []string {
	if m != "" && !slices.Contains(ms, m) {
		ms = append(ms, m)
	}
	return ms
}

func modelsText(ms []string) string {
	open, closed := slices.Contains(ms, "open"), slices.Contains(ms, "closed")
	switch {
	case open && closed:
		return "open and closed models"
	case open:
		return "open model (latency from the intended start)"
	case closed:
		return "closed model (latency from the actual send)"
	}
	return "no load (model n/a)"
}
