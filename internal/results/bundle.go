package results

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/kcbench/kcbench/internal/fileutil"
)

// A bundle carries a results folder through a text stream, such as a
// Kubernetes pod's log: a begin line naming it, the folder's files as a
// gzipped tar in base64 lines of 76 characters, and an end line. Lines
// around it, and a "[pod/…] " prefix that `kubectl logs --prefix` adds,
// are ignored when reading.
const (
	bundleBegin = "kcbench-results-begin "
	bundleEnd   = "kcbench-results-end"
	// maxBundle bounds a bundle's decoded size (a run's folder is a few MB).
	maxBundle = 1 << 30
)

// WriteBundle writes the regular files of dir and of its subfolders (one
// level: a split capacity search's step-NNN/, not deeper) as a bundle
// labelled label (e.g. "segment=1/3", no spaces or newlines).
func WriteBundle(w io.Writer, dir, label string) error {
	if label == "" || strings.ContainsAny(label, " \n\r") {
		return fmt.Errorf("bundle label %q: want a non-empty word", label)
	}
	var payload bytes.Buffer
	zw := gzip.NewWriter(&payload)
	tw := tar.NewWriter(zw)
	var add func(sub string, depth int) error
	add = func(sub string, depth int) error {
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			return err
		}
		for _, e := range ents {
			name := path.Join(sub, e.Name())
			if e.IsDir() && depth == 0 {
				if err := add(name, 1); err != nil {
					return err
				}
				continue
			}
			if !e.Type().IsRegular() {
				continue
			}
			b, err := fileutil.ReadFile(filepath.Join(dir, name), fileutil.MaxResultFile)
			if err != nil {
				return err
			}
			if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
				return err
			}
			if _, err := tw.Write(b); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add("", 0); err != nil {
		return err
	}
	if err := errors.Join(tw.Close(), zw.Close()); err != nil {
		return err
	}
	enc := base64.StdEncoding.EncodeToString(payload.Bytes())
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s%s\n", bundleBegin, label)
	for len(enc) > 0 {
		n := min(len(enc), 76)
		bw.WriteString(enc[:n])
		bw.WriteByte('\n')
		enc = enc[n:]
	}
	bw.WriteString(bundleEnd + "\n")
	return bw.Flush()
}

// Bundle is one bundle read from a stream.
type Bundle struct {
	Label string
	Files map[string][]byte // by slash-separated path inside the folder
}

// ReadBundles reads every complete bundle in r. A bundle begun and not
// ended (a truncated log) is an error naming it.
func ReadBundles(r io.Reader) ([]Bundle, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	var out []Bundle
	var cur *Bundle
	var enc strings.Builder
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(line, "[") { // kubectl logs --prefix
			if i := strings.Index(line, "] "); i > 0 {
				line = line[i+2:]
			}
		}
		switch {
		case strings.HasPrefix(line, bundleBegin):
			if cur != nil {
				return nil, fmt.Errorf("bundle %s: not ended before the next began", cur.Label)
			}
			cur = &Bundle{Label: strings.TrimSpace(strings.TrimPrefix(line, bundleBegin))}
			enc.Reset()
		case cur == nil:
		case line == bundleEnd:
			files, err := untar(enc.String())
			if err != nil {
				return nil, fmt.Errorf("bundle %s: %w", cur.Label, err)
			}
			cur.Files = files
			out = append(out, *cur)
			cur = nil
		default:
			if enc.Len()/4*3 > maxBundle {
				return nil, fmt.Errorf("bundle %s: larger than %d bytes", cur.Label, maxBundle)
			}
			enc.WriteString(strings.TrimSpace(line))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("bundle %s: cut off (no end line): the log may have been truncated", cur.Label)
	}
	return out, nil
}

func untar(enc string) (map[string][]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(io.LimitReader(zr, maxBundle))
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		name := h.Name
		if h.Typeflag != tar.TypeReg || !fs.ValidPath(name) || strings.Count(name, "/") > 1 || name == "." {
			return nil, fmt.Errorf("unexpected entry %q", name)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[name] = b
	}
}
