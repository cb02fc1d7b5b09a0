// Package experiment runs kcbench's experiments: a YAML file names a stack,
// a dataset (modes × tenant counts), phases, workloads, repeats, one-factor
// variants and a watchdog; Plan turns it into an ordered list of points;
// the Runner reaches each point's dataset by growing it or restoring a
// snapshot, restarts Keycloak and measures the boot, runs the cold and warm
// phases while observing the server, and writes one results folder per
// point (internal/results). Rerunning resumes: finished points are skipped.
//
// experiment is the one stage that drives all the others (stack, dataset,
// scenario, load, observe); nothing below it imports it.
package experiment
