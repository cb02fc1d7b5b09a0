// Package stack provisions the Keycloak under test on this machine: it
// fetches and caches the Keycloak distribution through Maven, runs one
// `kc.sh build` per distinct set of build options, finds a JDK the version
// supports, runs a private PostgreSQL (or, with --db mariadb, a private
// MariaDB; with --ldap slapd also an OpenLDAP) on 127.0.0.1, starts Keycloak in
// production mode, measures boot time and RSS, and stops everything it
// started. It hands out a kc.Target for what it runs.
//
// Every child process runs in its own process group. Foreground stacks give
// their children a parent-death signal, so nothing outlives kcbench; detached
// stacks (kcbench up) record each process's identity (pid, process group and
// start time) in a state file, so that a later `kcbench down` finds and kills
// them without trusting stale pids.
//
// stack may import kc; nothing below it in the pipeline may import stack.
package stack
