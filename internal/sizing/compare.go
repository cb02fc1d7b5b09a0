package sizing

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Comparison puts two sets of figures side by side, typically the guide's (A)
// and kcbench's measured ones (B).
type Comparison struct {
	A    string `json:"a"`
	B    string `json:"b"`
	Rows []Row  `json:"rows"`
}

// Row is one compared figure. Ratio is B ÷ A, or 0 when A is 0.
// NotMeasured says that B is not a measurement (it was taken from A's
// model): it is printed as "not measured", never as a figure.
type Row struct {
	What        string  `json:"what"`
	Unit        string  `json:"unit"`
	A           float64 `json:"a"`
	B           float64 `json:"b"`
	Ratio       float64 `json:"ratio"`
	NotMeasured bool    `json:"not_measured,omitempty"`
}

// MarkNotMeasured marks the rows whose What starts with prefix as not
// measured in B.
func (c *Comparison) MarkNotMeasured(prefix string) {
	for i := range c.Rows {
		if strings.HasPrefix(c.Rows[i].What, prefix) {
			c.Rows[i].NotMeasured, c.Rows[i].B, c.Rows[i].Ratio = true, 0, 0
		}
	}
}

func row(what, unit string, a, b float64) Row {
	r := Row{What: what, Unit: unit, A: a, B: b}
	if a != 0 {
		r.Ratio = b / a
	}
	return r
}

// Compare compares two sets of rates: operations per vCPU and CPU-ms per
// operation. For the first rows a ratio above 1 means B gets more done per
// vCPU than A; for the CPU-ms rows it means B costs more.
func Compare(a, b Rates) Comparison {
	al, ac, ar := a.CPUms()
	bl, bc, br := b.CPUms()
	return Comparison{A: a.Source, B: b.Source, Rows: []Row{
		row("logins per vCPU", "1/s", a.LoginsPerVCPU, b.LoginsPerVCPU),
		row("client-credential grants per vCPU", "1/s", a.ClientCredentialsPerVCPU, b.ClientCredentialsPerVCPU),
		row("refresh-token requests per vCPU", "1/s", a.RefreshesPerVCPU, b.RefreshesPerVCPU),
		row("CPU per login", "ms", al, bl),
		row("CPU per client-credential grant", "ms", ac, bc),
		row("CPU per refresh-token request", "ms", ar, br),
	}}
}

// CompareResults compares the sizings of the same load made with different
// rates or memory models (e.g. Calculate with GuideRates, then with
// RatesFromCPUms): CPU, memory and database figures of the first site.
// What B took from the guide's models rather than from a measurement —
// the database per request always, memory unless measured — is marked
// not measured.
func CompareResults(a, b Result) Comparison {
	c := compareResults(a, b)
	c.MarkNotMeasured("database")
	if b.Input.Memory.Source == GuideSource || b.Input.Memory.Source == "" {
		c.MarkNotMeasured("memory")
	}
	return c
}

func compareResults(a, b Result) Comparison {
	pa, pb := firstPod(a), firstPod(b)
	return Comparison{A: a.Input.Rates.Source, B: b.Input.Rates.Source, Rows: []Row{
		row("Keycloak CPU, cluster total", "vCPU", a.CPU.TotalVCPU, b.CPU.TotalVCPU),
		row("CPU request per pod", "vCPU", pa.CPURequest.VCPU(), pb.CPURequest.VCPU()),
		row("CPU limit per pod", "vCPU", pa.CPULimit.VCPU(), pb.CPULimit.VCPU()),
		row("memory request per pod", "MiB", float64(pa.MemoryRequest), float64(pb.MemoryRequest)),
		row("memory limit per pod", "MiB", float64(pa.MemoryLimit), float64(pb.MemoryLimit)),
		row("database vCPU, low", "vCPU", a.Database.VCPUMin, b.Database.VCPUMin),
		row("database vCPU, high", "vCPU", a.Database.VCPUMax, b.Database.VCPUMax),
		row("database write IOPS", "IOPS", a.Database.WriteIOPS, b.Database.WriteIOPS),
	}}
}

func firstPod(r Result) Pod {
	if len(r.Sites) == 0 {
		return Pod{}
	}
	return r.Sites[0].Pod
}

// WriteText writes c as an aligned table: what, A, B, B ÷ A.
func (c Comparison) WriteText(w io.Writer) error {
	a, b := c.A, c.B
	if a == "" {
		a = "A"
	}
	if b == "" {
		b = "B"
	}
	cells := [][4]string{{"", a, b, "ratio"}}
	for _, r := range c.Rows {
		ratio, b := "–", num(r.B)
		if r.A != 0 && !r.NotMeasured {
			ratio = "×" + fmt.Sprintf("%.2f", r.Ratio)
		}
		if r.NotMeasured {
			b = "not measured"
		}
		cells = append(cells, [4]string{r.What + " (" + r.Unit + ")", num(r.A), b, ratio})
	}
	var width [4]int
	for _, row := range cells {
		for i, s := range row {
			width[i] = max(width[i], utf8.RuneCountInString(s))
		}
	}
	bw := bufio.NewWriter(w)
	for _, row := range cells {
		fmt.Fprintf(bw, "%s  %s  %s  %s\n", pad(row[0], width[0]),
			padLeft(row[1], width[1]), padLeft(row[2], width[2]), padLeft(row[3], width[3]))
	}
	return bw.Flush()
}

func padLeft(s string, width int) string {
	if n := utf8.RuneCountInString(s); n < width {
		return strings.Repeat(" ", width-n) + s
	}
	return s
}
