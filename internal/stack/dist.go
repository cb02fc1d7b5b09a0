package stack

import (
	"archive/zip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Distribution is an unpacked Keycloak distribution in the cache.
type Distribution struct {
	Version string
	Home    string // the folder holding bin/kc.sh
}

// FetchDistribution returns the unpacked distribution of version, fetching
// org.keycloak:keycloak-quarkus-dist:<version>:zip through Maven and
// unpacking it once into cacheDir/keycloak/<version>/dist.
func FetchDistribution(ctx context.Context, cacheDir, version string, logf func(string, ...any)) (Distribution, error) {
	if _, err := ParseVersion(version); err != nil {
		return Distribution{}, err
	}
	root := filepath.Join(cacheDir, "keycloak", version)
	home := filepath.Join(root, "dist", "keycloak-"+version)
	if _, err := os.Stat(filepath.Join(home, "bin", "kc.sh")); err == nil {
		return Distribution{Version: version, Home: home}, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Distribution{}, err
	}
	unlock, err := lockFile(ctx, filepath.Join(root, ".lock"))
	if err != nil {
		return Distribution{}, err
	}
	defer unlock()
	if _, err := os.Stat(filepath.Join(home, "bin", "kc.sh")); err == nil {
		return Distribution{Version: version, Home: home}, nil // another kcbench made it
	}
	logf("fetching Keycloak %s through Maven", version)
	start := time.Now()
	zipPath, err := mavenFetch(ctx, Artifact{Group: "org.keycloak", ID: "keycloak-quarkus-dist", Version: version, Type: "zip"}, filepath.Join(cacheDir, "maven"))
	if err != nil {
		if errors.Is(err, ErrNotServed) {
			return Distribution{}, fmt.Errorf("keycloak %s is not served by Maven Central or your Maven mirror (is it a released 26.x version?): %w", version, err)
		}
		return Distribution{}, err
	}
	tmp, err := os.MkdirTemp(root, ".dist-*")
	if err != nil {
		return Distribution{}, err
	}
	defer os.RemoveAll(tmp)
	if err := unzip(zipPath, tmp); err != nil {
		return Distribution{}, fmt.Errorf("unpack %s: %w", zipPath, err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "keycloak-"+version, "bin", "kc.sh")); err != nil {
		return Distribution{}, fmt.Errorf("unpack %s: no keycloak-%s/bin/kc.sh inside", zipPath, version)
	}
	os.RemoveAll(filepath.Join(root, "dist"))
	if err := os.Rename(tmp, filepath.Join(root, "dist")); err != nil {
		return Distribution{}, err
	}
	logf("Keycloak %s unpacked in %s", version, time.Since(start).Round(100*time.Millisecond))
	return Distribution{Version: version, Home: home}, nil
}

// unzip extracts src into dst, keeping file modes and refusing paths that
// escape dst.
func unzip(src, dst string) error {
	r, err := zip.OpenReader(src)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, f := range r.File {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("unsafe path %q", f.Name)
		}
		p := filepath.Join(dst, name)
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := extractFile(f, p); err != nil {
			return err
		}
	}
	return nil
}

func extractFile(f *zip.File, p string) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	mode := f.Mode().Perm() | 0o400
	if mode&0o111 == 0 && strings.HasSuffix(p, ".sh") {
		mode |= 0o755
	}
	out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, rc); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// BuildOptions are `kc.sh build` options, e.g. "--features=token-exchange".
// kcbench always adds the ones it needs (the database kind, db: postgres
// or mariadb; health, metrics, user event metrics where the version has
// them: 26.0.0 refuses the option, 26.2.0 has it; 26.1 is left without,
// unverified). The database kind is a build-time option, so each kind
// has its own cached build (buildKey hashes the options).
func baseBuildOptions(version, db string) []string {
	if db == "" {
		db = DBPostgres
	}
	opts := []string{"--db=" + db, "--health-enabled=true", "--metrics-enabled=true"}
	if v, err := ParseVersion(version); err != nil || v.Minor >= 2 {
		opts = append(opts, "--event-metrics-user-enabled=true")
	}
	return opts
}

// Build is a Keycloak home on which `kc.sh build` ran with Options.
type Build struct {
	Dist    Distribution
	Home    string
	Options []string
	Java    JDK
}

// buildKey names a build folder: the same version, build options and Java
// major share one build.
func buildKey(opts []string, java JDK) string {
	s := slices.Clone(opts)
	slices.Sort(s)
	h := sha256.Sum256([]byte(fmt.Sprintf("java%d\n%s", java.Major, strings.Join(s, "\n"))))
	return hex.EncodeToString(h[:])[:12]
}

// EnsureBuild returns a cached build of dist for database kind db
// (DBPostgres, DBMariaDB; "" is PostgreSQL) with extra build options,
// running `kc.sh build` once per distinct set. A rejected option fails with
// Keycloak's own message.
func EnsureBuild(ctx context.Context, dist Distribution, java JDK, db string, extra []string, logf func(string, ...any)) (Build, error) {
	opts := append(baseBuildOptions(dist.Version, db), extra...)
	root := filepath.Dir(filepath.Dir(dist.Home)) // cache/keycloak/<v>
	dir := filepath.Join(root, "builds", buildKey(opts, java))
	b := Build{Dist: dist, Home: filepath.Join(dir, "keycloak"), Options: opts, Java: java}
	done := filepath.Join(dir, "build.ok")
	if _, err := os.Stat(done); err == nil {
		return b, nil
	}
	unlock, err := lockFile(ctx, filepath.Join(root, ".lock"))
	if err != nil {
		return Build{}, err
	}
	defer unlock()
	if _, err := os.Stat(done); err == nil {
		return b, nil
	}
	logf("building Keycloak %s (kc.sh build %s) with Java %s", dist.Version, strings.Join(opts, " "), java.Version)
	start := time.Now()
	if err := os.MkdirAll(filepath.Join(root, "builds"), 0o755); err != nil {
		return Build{}, err
	}
	tmp, err := os.MkdirTemp(filepath.Join(root, "builds"), ".build-*")
	if err != nil {
		return Build{}, err
	}
	defer os.RemoveAll(tmp)
	home := filepath.Join(tmp, "keycloak")
	if err := copyTree(dist.Home, home, false); err != nil {
		return Build{}, fmt.Errorf("copy distribution: %w", err)
	}
	logPath := filepath.Join(tmp, "build.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return Build{}, err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(home, "bin", "kc.sh"), append([]string{"build"}, opts...)...)
	cmd.Env = keycloakEnv(java, nil)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Run()
	logFile.Close()
	if err != nil {
		if ctx.Err() != nil {
			return Build{}, ctx.Err()
		}
		out, _ := os.ReadFile(logPath)
		return Build{}, &KeycloakError{Op: "kc.sh build", Reason: exitDescription(err), Message: keycloakMessage(string(out)), LogTail: lastLines(string(out), 20)}
	}
	os.Rename(logPath, filepath.Join(tmp, "build.log"))
	if err := os.WriteFile(filepath.Join(tmp, "build.ok"), []byte(strings.Join(opts, "\n")+"\n"), 0o644); err != nil {
		return Build{}, err
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return Build{}, err
	}
	logf("Keycloak build done in %s", time.Since(start).Round(100*time.Millisecond))
	return b, nil
}

// copyTree copies src into dst (which must not exist). With link, regular
// files are hard-linked (falling back to copies across file systems).
func copyTree(src, dst string, link bool) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		t := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(t, info.Mode().Perm()|0o700)
		case info.Mode()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(l, t)
		case info.Mode().IsRegular():
			if link {
				if err := os.Link(p, t); err == nil {
					return nil
				}
			}
			return copyFile(p, t, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// lockFile takes an exclusive flock on path, waiting (with ctx) for another
// kcbench that holds it.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
