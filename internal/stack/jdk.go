package stack

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// JDK is a Java installation Keycloak can run on.
type JDK struct {
	Home    string `json:"home"`
	Version string `json:"version"` // e.g. 17.0.15
	Major   int    `json:"major"`
}

// supportedJavaMajors lists the Java feature releases a Keycloak version
// supports: 17 and 21 for every 26.x, and 25 from 26.5 on (the supported
// configurations guide lists OpenJDK 17, 21 and 25; 26.7.3 verified on 17 and
// 25).
func supportedJavaMajors(kcVersion string) []int {
	v, err := ParseVersion(kcVersion)
	if err == nil && v.Minor >= 5 {
		return []int{17, 21, 25}
	}
	return []int{17, 21}
}

// javaPreference orders supported majors: a JDK every 26.x supports comes
// first (21, then 17), so that two Keycloak versions compare on the same JVM;
// newer ones only when nothing else is there.
var javaPreference = []int{21, 17, 25}

// jdkSearchDirs are the folders whose subfolders are system JDKs.
var jdkSearchDirs = []string{"/usr/lib/jvm", "/usr/java", "/opt/java"}

// FindJDK picks the JDK to run kcVersion with. explicit (from --java-home) is
// used if given and must be supported; otherwise JAVA_HOME (envJavaHome) wins
// when supported, then the system's JDKs in preference order. The error names
// every JDK found and what the version needs.
func FindJDK(kcVersion, explicit, envJavaHome string) (JDK, error) {
	return findJDK(kcVersion, explicit, envJavaHome, jdkSearchDirs, true)
}

func findJDK(kcVersion, explicit, envJavaHome string, searchDirs []string, usePath bool) (JDK, error) {
	want := supportedJavaMajors(kcVersion)
	wantStr := joinInts(want)
	if explicit != "" {
		j, err := inspectJDK(explicit)
		if err != nil {
			return JDK{}, fmt.Errorf("--java-home %s: %w", explicit, err)
		}
		if !slices.Contains(want, j.Major) {
			return JDK{}, fmt.Errorf("--java-home %s is Java %s; Keycloak %s needs Java %s", explicit, j.Version, kcVersion, wantStr)
		}
		return j, nil
	}
	var found []JDK
	seen := map[string]bool{}
	add := func(home string) {
		real, err := filepath.EvalSymlinks(home)
		if err != nil || seen[real] {
			return
		}
		seen[real] = true
		if j, err := inspectJDK(home); err == nil {
			found = append(found, j)
		}
	}
	if envJavaHome != "" {
		add(envJavaHome)
		if len(found) == 1 && slices.Contains(want, found[0].Major) {
			return found[0], nil
		}
	}
	for _, d := range searchDirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			add(filepath.Join(d, e.Name()))
		}
	}
	if p, err := exec.LookPath("java"); usePath && err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			add(filepath.Dir(filepath.Dir(real)))
		}
	}
	for _, major := range javaPreference {
		if !slices.Contains(want, major) {
			continue
		}
		for _, j := range found {
			if j.Major == major {
				return j, nil
			}
		}
	}
	if len(found) == 0 {
		return JDK{}, fmt.Errorf("no JDK found (looked at JAVA_HOME, %s and java on PATH); Keycloak %s needs Java %s: install one (e.g. apt-get install openjdk-17-jdk-headless) or pass --java-home",
			strings.Join(searchDirs, ", "), kcVersion, wantStr)
	}
	var names []string
	for _, j := range found {
		names = append(names, fmt.Sprintf("%s (Java %s)", j.Home, j.Version))
	}
	return JDK{}, fmt.Errorf("no supported JDK: Keycloak %s needs Java %s, found %s", kcVersion, wantStr, strings.Join(names, ", "))
}

var javaVersionRe = regexp.MustCompile(`version "([^"]+)"`)

// inspectJDK reads a JDK's version from its release file, or from
// `java -version` when there is none.
func inspectJDK(home string) (JDK, error) {
	java := filepath.Join(home, "bin", "java")
	if st, err := os.Stat(java); err != nil || st.IsDir() {
		return JDK{}, errors.New("no bin/java")
	}
	ver := ""
	if f, err := os.Open(filepath.Join(home, "release")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "JAVA_VERSION="); ok {
				ver = strings.Trim(v, `"`)
			}
		}
		f.Close()
	}
	if ver == "" {
		out, err := exec.Command(java, "-version").CombinedOutput()
		if err != nil {
			return JDK{}, fmt.Errorf("java -version: %w", err)
		}
		m := javaVersionRe.FindSubmatch(out)
		if m == nil {
			return JDK{}, errors.New("cannot read the Java version")
		}
		ver = string(m[1])
	}
	major, err := javaMajor(ver)
	if err != nil {
		return JDK{}, err
	}
	return JDK{Home: home, Version: ver, Major: major}, nil
}

// javaMajor turns "17.0.15", "21", "1.8.0_392" into 17, 21, 8.
func javaMajor(v string) (int, error) {
	v = strings.TrimPrefix(v, "1.")
	end := strings.IndexAny(v, ".+-_")
	if end >= 0 {
		v = v[:end]
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("bad Java version %q", v)
	}
	return n, nil
}

func joinInts(xs []int) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, ", ")
}
