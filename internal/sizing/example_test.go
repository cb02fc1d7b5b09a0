package sizing_test

import (
	"fmt"
	"os"

	"github.com/kcbench/kcbench/internal/sizing"
)

// The Keycloak 26 sizing guide's worked example.
func Example() {
	in := sizing.DefaultInput()
	in.LoginsPerSec = 45
	in.ClientCredentialsPerSec = 360
	in.RefreshesPerSec = 360
	in.LogoutsPerSec = 5
	in.Pods = 3

	r, err := sizing.Calculate(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	p := r.Sites[0].Pod
	fmt.Printf("CPU per pod: %v vCPU requested, %v vCPU limit\n", p.CPURequest.VCPU(), p.CPULimit.VCPU())
	fmt.Printf("memory per pod: %d MB requested, %d MB limit\n", p.MemoryRequest, p.MemoryLimit)
	d := r.Database
	fmt.Printf("database: %v req/s → %v–%v vCPU (+%v idle), about %v write IOPS\n",
		d.RequestsPerSec, d.ApproxVCPUMin, d.ApproxVCPUMax, d.IdleVCPU, d.ApproxWriteIOPS)
	// Output:
	// CPU per pod: 3 vCPU requested, 7.5 vCPU limit
	// memory per pod: 1250 MB requested, 1360 MB limit
	// database: 410 req/s → 1.4–2.8 vCPU (+0.3 idle), about 5700 write IOPS
}

// Calibrated sizing: the guide's rates next to ones measured by kcbench
// (server CPU-ms per login, per client-credential grant, per refresh).
func ExampleCompare() {
	measured := sizing.RatesFromCPUms(77, 6.8, 7.2, "measured")
	if err := sizing.Compare(sizing.GuideRates(), measured).WriteText(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	//                                          Keycloak 26 sizing guide  measured  ratio
	// logins per vCPU (1/s)                                          15    12.987  ×0.87
	// client-credential grants per vCPU (1/s)                       120   147.059  ×1.23
	// refresh-token requests per vCPU (1/s)                         120   138.889  ×1.16
	// CPU per login (ms)                                         66.667        77  ×1.16
	// CPU per client-credential grant (ms)                        8.333       6.8  ×0.82
	// CPU per refresh-token request (ms)                          8.333       7.2  ×0.86
}

// More than 2,500 concurrently used clients raise the users and realms caches.
func ExampleResult_WriteK8s() {
	in := sizing.DefaultInput()
	in.LoginsPerSec = 30
	in.Pods = 2
	in.ConcurrentClients = 3000
	r, err := sizing.Calculate(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := r.WriteK8s(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// # Keycloak sizing for 30 logins/s, 0 client-credential grants/s, 0 refresh-token requests/s, 0 logouts/s
	// # Rates: 15 logins, 120 client-credential grants, 120 refreshes per vCPU (Keycloak 26 sizing guide)
	// # Fields of a Keycloak CR's spec. In a Deployment: replicas, the container's resources,
	// # and each additionalOption as a container argument (--name=value).
	// # Database (not part of this spec): about 0.1–0.2 vCPU plus 0.3 vCPU idle, about 400 write IOPS.
	// # site 1
	// instances: 2
	// resources:
	//   requests:
	//     cpu: "1"
	//     memory: "1250Mi"
	//   limits:
	//     cpu: "2500m"
	//     memory: "1360Mi"
	// # more than 2,500 concurrently used clients: larger users and realms caches
	// additionalOptions:
	//   - name: cache-embedded-users-max-count
	//     value: "10000"
	//   - name: cache-embedded-realms-max-count
	//     value: "12000"
	// # Heap: the Keycloak image's -XX:MaxRAMPercentage=70 -XX:InitialRAMPercentage=50 give 952Mi max / 680Mi initial heap
	// # under the 1360Mi limit. Outside that image set JAVA_OPTS_KC_HEAP="-Xms680m -Xmx952m".
}
