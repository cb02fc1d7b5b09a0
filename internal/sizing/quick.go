package sizing

import (
	"fmt"
	"io"

	"github.com/kcbench/kcbench/internal/results"
)

// WriteQuickSizing sizes the sizing guide's worked example load with the
// measured warm CPU-ms of the realms-mode point.
func WriteQuickSizing(w io.Writer, pts []*results.Point) error {
	var login, cc, refresh float64
	for _, p := range pts {
		if p.Summary.Params["mode"] != "realms" {
			continue
		}
		for _, wl := range p.Summary.Workloads {
			if wl.Phase != results.PhaseWarm {
				continue
			}
			switch wl.Scenario {
			case results.ScenarioPasswordGrant:
				login = wl.ServerCPUMsPerOp
			case results.ScenarioClientCredentials:
				cc = wl.ServerCPUMsPerOp
			case results.ScenarioRefresh:
				refresh = wl.ServerCPUMsPerOp
			}
		}
	}
	if login <= 0 || cc <= 0 || refresh <= 0 {
		return fmt.Errorf("no warm CPU-ms for password-grant, client-credentials and refresh")
	}
	in := DefaultInput()
	in.LoginsPerSec, in.ClientCredentialsPerSec, in.RefreshesPerSec, in.LogoutsPerSec = 45, 360, 360, 5
	guide, err := Calculate(in)
	if err != nil {
		return err
	}
	in.Rates = RatesFromCPUms(login, cc, refresh, "measured by kcbench quickstart (warm, realms mode)")
	measured, err := Calculate(in)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nSizing for the guide's example load (45 logins/s, 360 client-credential grants/s, 360 refreshes/s, 3 pods),\n")
	fmt.Fprintf(w, "with the server CPU this run measured (%.1f / %.1f / %.1f ms per login / grant / refresh; the password\npolicy here is pbkdf2-sha256:1, so logins are far cheaper than with Keycloak's default argon2):\n\n", login, cc, refresh)
	return CompareResults(guide, measured).WriteText(w)
}
