package stack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotServed means Maven could not find an artifact (an unknown or
// unreleased version, or a mirror that does not carry it).
var ErrNotServed = errors.New("not served by Maven")

// Artifact is a Maven coordinate.
type Artifact struct {
	Group, ID, Version, Type string // Type "" means jar
}

func (a Artifact) coords() string {
	t := a.Type
	if t == "" {
		t = "jar"
	}
	return fmt.Sprintf("%s:%s:%s:%s", a.Group, a.ID, a.Version, t)
}

func (a Artifact) fileName() string {
	t := a.Type
	if t == "" {
		t = "jar"
	}
	return fmt.Sprintf("%s-%s.%s", a.ID, a.Version, t)
}

// mavenFetch makes sure the artifact is in Maven's local repository, using
// `mvn dependency:get` so that the user's Maven settings (mirrors, proxies,
// local repository) apply, and returns the file's path. The output of mvn is
// kept for the error message only.
func mavenFetch(ctx context.Context, a Artifact, scratch string) (string, error) {
	if _, err := exec.LookPath("mvn"); err != nil {
		return "", errors.New("mvn not found on PATH: kcbench fetches Keycloak and PostgreSQL through Maven (apt-get install maven)")
	}
	run := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "mvn", append([]string{"-B", "-q"}, args...)...)
		cmd.Dir = scratch // mvn must not pick up a pom.xml from the user's cwd
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.Bytes(), err
	}
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return "", err
	}
	// -U retries a download whose failure Maven cached earlier.
	out, err := run("-U", "dependency:get", "-Dartifact="+a.coords(), "-Dtransitive=false")
	if err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", mavenError(a, out, err)
	}
	// Default local repository first; then ask Maven to copy it out (a
	// settings.xml may move the local repository).
	home, _ := os.UserHomeDir()
	p := filepath.Join(home, ".m2", "repository", filepath.FromSlash(strings.ReplaceAll(a.Group, ".", "/")), a.ID, a.Version, a.fileName())
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	dst := filepath.Join(scratch, "artifacts")
	out, err = run("dependency:copy", "-Dartifact="+a.coords(), "-DoutputDirectory="+dst, "-Dmdep.overWriteReleases=true")
	if err != nil {
		return "", mavenError(a, out, err)
	}
	p = filepath.Join(dst, a.fileName())
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("maven fetched %s but it is not at %s", a.coords(), p)
	}
	return p, nil
}

func mavenError(a Artifact, out []byte, err error) error {
	s := string(out)
	for _, marker := range []string{"Could not find artifact", "was not found in", "Unable to find artifact", "Could not resolve"} {
		if strings.Contains(s, marker) {
			return fmt.Errorf("%s: %w (mvn: %s)", a.coords(), ErrNotServed, firstErrorLine(s))
		}
	}
	return fmt.Errorf("mvn dependency:get %s: %v: %s", a.coords(), err, firstErrorLine(s))
}

func firstErrorLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(strings.ReplaceAll(l, "\x1b[0m", ""))
		if strings.HasPrefix(l, "[ERROR]") {
			return strings.TrimSpace(strings.TrimPrefix(l, "[ERROR]"))
		}
	}
	return strings.TrimSpace(lastLines(s, 3))
}

// lastLines returns up to n final lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
