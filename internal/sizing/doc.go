// Package sizing turns a target load (logins, client-credential grants and
// refresh-token requests per second) into Keycloak pod resources, database
// figures and cache options, using the rules of the Keycloak 26 sizing guide
// ("Concepts for sizing CPU and memory resources", high-availability guide).
// The per-vCPU rates can be replaced by ones measured with kcbench
// (RatesFromCPUms), so the same arithmetic yields a calibrated sizing.
//
// Its job is arithmetic. Rendering goes to an io.Writer the caller passes
// in (WriteText, WriteK8s, Comparison.WriteText, Calibration.WriteText,
// Live.WriteText, WriteTenantsText). kcbench size's flags, their checks and
// its modes live here too (Flags, Usage, Run): the results folders are read
// through internal/results and /metrics through internal/observe, with the
// clock and HTTP client handed in (Deps). It must not import the stages
// that drive a server (stack, kc, dataset, load, scenario) nor experiment.
//
// Three inputs besides the flags' load:
//
//   - Calibrate turns kcbench's measured server CPU-ms per operation
//     (Measurement: one workload of one experiment point) into one
//     Calibration per variant: warm phase before cold, realms mode before
//     organizations, fewest tenants, the browser login before the password
//     grant, mean over repeats. Its Rates replace the guide's; an operation
//     not measured keeps the guide's rate.
//   - LiveRates turns two snapshots of a running Keycloak's counters
//     (keycloak_user_events_total, keycloak_credentials_password_hashing_
//     validations_total) into rates, times a peak factor, and says which
//     metrics were missing and which options turn them on.
//   - TenantCapacities checks SLOs (admin and token p95, failed iterations,
//     RSS under the pod's memory limit, finished points) at every tenant
//     count of a multi-tenancy experiment and gives, per mode, the largest
//     count at which they held and what broke first beyond it.
//
// # The rules
//
// Keycloak CPU (cluster total, divided evenly over the pods of one site):
//
//	vCPU = logins/s ÷ 15 + client-credential grants/s ÷ 120 + refreshes/s ÷ 120
//	request per pod = vCPU ÷ pods, rounded up to a whole millicore
//	limit per pod   = request × (1 + headroom), headroom 150 % by default
//
// Logouts cost no Keycloak CPU in the guide's model; they only count for the
// database.
//
// Memory per pod (independent of the load): request = 1250 MB, which covers
// the realm caches and 10,000 cached sessions. In a container the JVM heap is
// 70 % of the memory limit and non-heap memory is about 300 MB, so
//
//	limit = (request − 300) ÷ 0.7, rounded up to a multiple of 10 MB
//
// (1250 → 1357.14… → 1360, as in the guide's example). A limit below the
// request (requests under 1000 MB) is raised to the request. The guide's "MB"
// is read as MiB, the unit of Kubernetes "Mi" and of the JVM's -Xmx…m.
//
// Database, with user sessions stored in it (the Keycloak 26 default): per 100
// login + logout + refresh requests per second (client-credential grants
// create no session and are not counted) budget 1,400 write IOPS and 0.35 to
// 0.7 vCPU; an idle load of about 0.3 vCPU comes on top and is reported
// separately, as the guide does. Result keeps the exact figures; the
// "about" figures are the exact ones truncated (rounded down) to 0.1 vCPU and
// to 100 IOPS, which reproduces the guide's example: 45 logins + 360
// refreshes + 5 logouts = 410 req/s → 4.1 × 0.35 = 1.435 → 1.4 vCPU,
// 4.1 × 0.7 = 2.87 → 2.8 vCPU, 4.1 × 1400 = 5,740 → 5,700 IOPS. Rounding to
// nearest would print 2.9 for the upper bound, and counting the idle load in
// would print 1.7–3.1, neither of which the guide does.
//
// More than 2,500 clients used concurrently overflow the default caches of
// 10,000 entries: the users cache is raised to 2× and the realms cache to 4×
// the number of concurrent clients, never below the default, and emitted as
// --cache-embedded-users-max-count / --cache-embedded-realms-max-count.
// (The guide says to "increase … by" those amounts; kcbench reads it as
// "to", which matches the threshold: 4 × 2,500 = 10,000, the default size.)
//
// Two active-active sites: the second site runs the same number of pods with
// the same memory; its CPU follows a SiteStrategy (same, half-requests, half).
// The database is unchanged because both sites share one writer.
package sizing
