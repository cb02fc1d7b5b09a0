package results

// DirectoryCost is what the LDAP directory holding the users (--ldap) used
// over a run's measured window: its server's CPU time, in total and per
// successful iteration (summary.json's "directory"). With users in LDAP a
// password login costs a bind there, so server cost per operation is
// Keycloak's plus the database's plus this.
type DirectoryCost struct {
	Available bool    `json:"available"`
	Reason    string  `json:"reason,omitempty"` // why not
	Source    string  `json:"source,omitempty"`
	Window    float64 `json:"window_s,omitempty"`
	Ops       int64   `json:"ops,omitempty"` // successful iterations
	// CPU is slapd's CPU time over the window, in seconds.
	CPU        float64 `json:"cpu_s,omitempty"`
	CPUMsPerOp float64 `json:"cpu_ms_per_op,omitempty"`
}
