//go:build integration

package experiment_test

import "fmt"

func fmtSprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
