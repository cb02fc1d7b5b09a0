// Package experiments ships kcbench's experiment files, so that
// `kcbench experiment run multitenancy` works without a checkout.
package experiments

import "embed"

// FS holds the shipped *.yaml files.
//
//go:embed *.yaml
var FS embed.FS
