package kc

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes what Check found about the Keycloak at baseURL.
func (info *Info) WriteText(w io.Writer, baseURL, managementURL string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\t%s (external)\n", baseURL)
	fmt.Fprintf(tw, "keycloak\t%s on Java %s\n", info.Version, info.JavaVersion)
	fmt.Fprintf(tw, "admin login\tok\n")
	fmt.Fprintf(tw, "realms\t%d\n", info.Realms)
	switch {
	case info.ManagementReady != nil:
		fmt.Fprintf(tw, "ready\t%v (%s)\n", *info.ManagementReady, managementURL)
	case info.ManagementError != "":
		fmt.Fprintf(tw, "ready\tunknown: %s\n", info.ManagementError)
	default:
		fmt.Fprintf(tw, "ready\tunknown (no --management-url)\n")
	}
	return tw.Flush()
}
