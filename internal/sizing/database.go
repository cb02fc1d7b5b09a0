package sizing

import (
	"fmt"
	"io"
	"strings"

	"github.com/kcbench/kcbench/internal/results"
)

// DBFigure is the database's measured cost per operation of one kind: the
// mean over the measurements of the cell the CPU figure came from,
// weighted by their successful iterations. A figure no measurement read
// (a view the role could not read) is -1.
type DBFigure struct {
	Op             Op      `json:"op"`
	CPUMsPerOp     float64 `json:"cpu_ms_per_op"` // 0: not measured
	XactsPerOp     float64 `json:"xacts_per_op"`
	WALBytesPerOp  float64 `json:"wal_bytes_per_op"`
	WriteIOPSPerOp float64 `json:"write_iops_per_op"` // 0: not reported (not durable, or no counters)
	Durable        bool    `json:"durable"`
	OK             int64   `json:"ok"`
	// Engine is "mariadb" when the figures come from MariaDB: its CPU
	// only (the other figures are PostgreSQL statistics).
	Engine string `json:"engine,omitempty"`
}

// dbFigure averages the database costs of ms in f's cell.
func dbFigure(op Op, f Figure, ms []Measurement) (DBFigure, bool) {
	d := DBFigure{Op: op, Durable: true}
	var cpuN, xactN, walN, iopsN int64
	for _, m := range ms {
		if o, _ := OpForScenario(m.Scenario); o != op || m.DB == nil || !m.DB.Available || m.DB.Ops <= 0 {
			continue
		}
		if m.Phase != f.Phase || m.Mode != f.Mode || m.Tenants != f.Tenants || m.Workload != f.Workload {
			continue
		}
		n := m.DB.Ops
		d.OK += n
		if m.DB.Engine != "" {
			d.Engine = m.DB.Engine
		}
		d.Durable = d.Durable && m.DB.Durable
		if m.DB.Has(results.DBViewDatabase) {
			d.XactsPerOp += m.DB.XactsPerOp * float64(n)
			xactN += n
		}
		if m.DB.Has(results.DBViewWAL) {
			d.WALBytesPerOp += m.DB.WALBytesPerOp * float64(n)
			walN += n
		}
		if m.DB.Durable && m.DB.WALSyncs >= 0 && m.DB.DataWrites >= 0 {
			d.WriteIOPSPerOp += m.DB.WriteIOPSPerOp * float64(n)
			iopsN += n
		}
		if m.DB.CPUMeasured {
			d.CPUMsPerOp += m.DB.CPUMsPerOp * float64(n)
			cpuN += n
		}
	}
	if d.OK == 0 {
		return DBFigure{}, false
	}
	d.XactsPerOp, d.WALBytesPerOp = meanOr(d.XactsPerOp, xactN, -1), meanOr(d.WALBytesPerOp, walN, -1)
	// write IOPS only when every measurement had them: a mean over some
	// would price the rest at nothing
	d.WriteIOPSPerOp = meanOr(d.WriteIOPSPerOp, iopsN, 0)
	if !d.Durable || iopsN < d.OK {
		d.WriteIOPSPerOp = 0
	}
	d.CPUMsPerOp = meanOr(d.CPUMsPerOp, cpuN, 0)
	return d, true
}

// meanOr is sum/n, or none when n is 0.
func meanOr(sum float64, n int64, none float64) float64 {
	if n == 0 {
		return none
	}
	return sum / float64(n)
}

// WriteDatabase prints the measured database figures of c beside the
// guide's rule, at load in.
func (c Calibration) WriteDatabase(w io.Writer, in Input, guide Database) error {
	if len(c.Database) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\nDatabase, measured by kcbench (summary.json \"database\"; sessions in the database, Keycloak 26):")
	rates := map[Op]float64{OpLogin: in.LoginsPerSec, OpClientCredentials: in.ClientCredentialsPerSec, OpRefresh: in.RefreshesPerSec}
	var cpuTerms, iopsTerms []string
	var cpu, iops float64
	iopsKnown := true
	for _, d := range c.Database {
		iopsText := "write IOPS not reported (the database did not sync: kcbench up --db-durable)"
		if d.Durable {
			iopsText = "write IOPS not reported (WAL syncs or data writes not read)"
		}
		if d.WriteIOPSPerOp > 0 {
			iopsText = fmt.Sprintf("%.3f write IOPS", d.WriteIOPSPerOp)
		} else {
			iopsKnown = false
		}
		cpuText := "CPU not measured"
		if d.CPUMsPerOp > 0 {
			cpuText = fmt.Sprintf("%.3f ms CPU", d.CPUMsPerOp)
		}
		if d.Engine != "" {
			fmt.Fprintf(w, "  per %-20s %s on %s (transactions, WAL and write IOPS not available on MariaDB) (%d operations)\n", d.Op.String()+":", cpuText, d.Engine, d.OK)
		} else {
			xactText, walText := "transactions not read", "WAL not read"
			if d.XactsPerOp >= 0 {
				xactText = fmt.Sprintf("%.2f transactions", d.XactsPerOp)
			}
			if d.WALBytesPerOp >= 0 {
				walText = fmt.Sprintf("%.0f WAL bytes", d.WALBytesPerOp)
			}
			fmt.Fprintf(w, "  per %-20s %s, %s, %s, %s (%d operations)\n", d.Op.String()+":", cpuText, xactText, walText, iopsText, d.OK)
		}
		if r := rates[d.Op]; r > 0 {
			cpuTerms = append(cpuTerms, fmt.Sprintf("%s/s × %.3f ms", num(r), d.CPUMsPerOp))
			cpu += r * d.CPUMsPerOp / 1000
			iopsTerms = append(iopsTerms, fmt.Sprintf("%s/s × %.3f", num(r), d.WriteIOPSPerOp))
			iops += r * d.WriteIOPSPerOp
		}
	}
	if len(cpuTerms) == 0 {
		return nil
	}
	fmt.Fprintf(w, "  database vCPU = %s = %.2f vCPU (the guide: %s–%s vCPU plus %s idle)\n",
		strings.Join(cpuTerms, " + "), cpu, num(guide.ApproxVCPUMin), num(guide.ApproxVCPUMax), num(guide.IdleVCPU))
	if iopsKnown {
		ratio := ""
		if guide.WriteIOPS > 0 {
			ratio = fmt.Sprintf(", %.2f× the guide's", iops/guide.WriteIOPS)
		}
		fmt.Fprintf(w, "  write IOPS    = %s = %.0f IOPS (the guide: %s%s; %s)\n", strings.Join(iopsTerms, " + "), iops, num(guide.ApproxWriteIOPS), ratio, results.WriteIOPSFormula)
	} else {
		fmt.Fprintf(w, "  write IOPS: not measured on a durable database; the guide: %s\n", num(guide.ApproxWriteIOPS))
	}
	fmt.Fprintln(w, "  Logouts are not priced here (the guide counts them with logins and refreshes); measured per 100 req/s the guide budgets 1,400 IOPS.")
	return nil
}
