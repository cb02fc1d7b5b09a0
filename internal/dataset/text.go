package dataset

import (
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
)

// WriteText writes what a seed did: tenants, time, rate, the server's CPU
// (when cpuKnown) and the manifest's path.
func (r *SeedResult) WriteText(w io.Writer, mode Mode, cpuKnown bool, manifestPath string) {
	cpuNote := "server CPU unknown (external target)"
	if cpuKnown {
		cpuNote = fmt.Sprintf("server CPU %.1f s", r.ServerCPU.Seconds())
		if r.Added > 0 && r.Duration > 0 {
			cpuNote += fmt.Sprintf(" (%.2f s per tenant added; %s)", r.ServerCPU.Seconds()/float64(r.Added), r.Utilisation(runtime.NumCPU()))
		}
	}
	fmt.Fprintf(w, "%s mode: %d tenants complete (%d were there, %d added, %d redone) in %.1f s, %.2f tenants/s, %s; strategy %s\nmanifest: %s\n",
		mode, r.Tenants, r.Existing, r.Added, r.Redone, r.Duration.Seconds(), r.TenantsPerSecond(), cpuNote, r.Strategy, manifestPath)
	if r.Sessions != nil {
		r.Sessions.WriteText(w)
	}
}

// Utilisation says how busy the server kept the machine's cores over the
// seed and, when the machine's CPU was read, how much of what the other
// processes (the database, kcbench, anything else) left it: a server
// that used nearly all of that was the bottleneck.
func (r *SeedResult) Utilisation(cores int) string {
	if r.MachineTotal <= 0 {
		return fmt.Sprintf("Keycloak busy %.0f%% of the %d cores over the seed", 100*r.ServerCPU.Seconds()/r.Duration.Seconds()/float64(cores), cores)
	}
	server := r.ServerCPU.Seconds() / r.MachineTotal.Seconds()
	machine := r.MachineBusy.Seconds() / r.MachineTotal.Seconds()
	others := max(machine-server, 0)
	s := fmt.Sprintf("Keycloak busy %.0f%% of the %d cores over the seed, the machine %.0f%%", 100*server, cores, 100*machine)
	if left := 1 - others; left > 0 {
		s += fmt.Sprintf(": Keycloak used %.0f%% of the CPU the other processes (%.0f%%: database, kcbench, the rest) left it", 100*min(server/left, 1), 100*others)
	}
	return s
}

// WriteText describes the dataset of the manifest at path.
func (m *Manifest) WriteText(w io.Writer, path string) error {
	s := m.Spec
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "manifest\t%s\n", path)
	fmt.Fprintf(tw, "target\t%s\n", m.Target)
	fmt.Fprintf(tw, "mode\t%s\n", s.Mode)
	fmt.Fprintf(tw, "tenants\t%d\n", s.Tenants)
	otp := ""
	if s.Content.OTPUsers > 0 {
		otp = fmt.Sprintf(", %d OTP users", s.Content.OTPUsers)
	}
	uma := ""
	if s.Content.UMAResources > 0 {
		uma = fmt.Sprintf(", a resource server with %d resources", s.Content.UMAResources)
	}
	if n := s.Content.SAMLClients; n > 0 {
		uma += fmt.Sprintf(", %d SAML clients", n)
	}
	fmt.Fprintf(tw, "per tenant\t%d users%s, %d clients, %d realm roles, %d client roles per client, %d groups%s\n", s.Content.Users, otp, s.Content.Clients, s.Content.RealmRoles, s.Content.ClientRolesPerClient, s.Content.Groups, uma)
	if n := s.Content.BrokerUsers; n > 0 {
		if s.Mode == ModeOrgs {
			fmt.Fprintf(tw, "identity provider\trealm %s with %d users a tenant, brokered by each organization as its own (t00001-%s), by email domain\n", s.IdPRealm(), n, IdPAlias)
		} else {
			fmt.Fprintf(tw, "identity provider\trealm %s with %d users, brokered by every tenant realm as %s\n", s.IdPRealm(), n, IdPAlias)
		}
	}
	if h := s.Content.Shape; h.Any() {
		fmt.Fprintf(tw, "shape\t%d realm roles and %d groups a user, %d client roles a user, composite roles %d deep and %d wide, %d claim mappers a backend client, group trees %d deep and %d wide, %d client scopes a backend client\n",
			max(1, h.RolesPerUser), max(1, h.GroupsPerUser), h.ClientRolesPerUser, h.CompositeDepth, h.CompositeWidth, h.MappersPerClient, h.GroupDepth, h.GroupFanout, h.ScopesPerClient)
	}
	if st := m.Sessions; st != nil {
		fmt.Fprintf(tw, "sessions\t%d online, %d offline, written %s in %.1f s\n", st.Online, st.Offline, st.At.Format("2006-01-02 15:04:05"), st.Seconds)
	}
	fmt.Fprintf(tw, "password policy\t%s\n", s.Policy)
	fmt.Fprintf(tw, "password salts\t%s\n", saltsNote(m.Salts))
	fmt.Fprintf(tw, "fingerprint\t%s\n", m.Fingerprint)
	for _, ev := range m.Seeds {
		salts := ""
		if ev.Salts != "" {
			salts = ", " + ev.Salts + " salts"
		}
		fmt.Fprintf(tw, "seed\t%s %s: %d→%d tenants, +%d (%d redone) in %.1f s, server CPU %.1f s%s\n", ev.At.Format("2006-01-02 15:04:05"), ev.Strategy, ev.From, ev.To, ev.Added, ev.Redone, ev.Seconds, ev.ServerCPUSec, salts)
	}
	return tw.Flush()
}

// saltsNote explains the manifest's password_salts.
func saltsNote(s string) string {
	switch s {
	case SaltsShared:
		return "shared: every user's credential has the same salt and hash, computed once (--unique-salts for one per user)"
	case SaltsPerUser:
		return "per-user: every user has its own salt and hash"
	case SaltsMixed:
		return "mixed: seeding runs differed (see below)"
	}
	return "unknown (seeded before kcbench recorded it)"
}
