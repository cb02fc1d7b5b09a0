// Package observe samples the server while load runs, once a second per
// phase: Keycloak's and PostgreSQL's process CPU and RSS (whole process
// trees, from /proc), the JVM's heap, GC and HTTP server figures and the
// DB pool from Keycloak's management /metrics (Prometheus text format),
// and PostgreSQL's own statistics (commits, rollbacks, block reads and
// hits, tuples written, database size). It also gives the CPU time of the
// Keycloak process for the CPU-per-operation figures: from /proc for a
// local server, from the metrics for any other. What a Target does not
// expose is listed as unavailable, for the report to say.
//
// Readers of /proc take an fs.FS rooted at /proc, so they can be tested on
// fixtures. observe works on a kc.Target's pid and URLs; it must not
// import stack, dataset, load or scenario.
package observe
