package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/kcbench/kcbench/internal/cliutil"
	"github.com/kcbench/kcbench/internal/dataset"
	"github.com/kcbench/kcbench/internal/kc"
	"github.com/kcbench/kcbench/internal/stack"
)

func cmdDataset(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usagef("dataset: want a subcommand: verify, export, show")
	}
	switch args[0] {
	case "verify":
		return cmdDatasetVerify(ctx, e, args[1:])
	case "export":
		return cmdDatasetExport(ctx, e, args[1:])
	case "show":
		return cmdDatasetShow(ctx, e, args[1:])
	case "-h", "--help", "help":
		fmt.Fprintln(e.stderr, "Usage: kcbench dataset verify|export|show [flags]")
		return nil
	}
	return usagef("dataset: unknown subcommand %q (want verify, export or show)", args[0])
}

func cmdDatasetVerify(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "dataset verify", "dataset verify [--manifest F] [flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	var t kc.TargetFlags
	t.RegisterFlags(fs)
	manifest := fs.String("manifest", "", "dataset manifest (default: dataset.json in the local stack's folder)")
	asJSON := fs.Bool("json", false, "print JSON")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	tg, mpath, _, _, err := datasetTarget(e, &t, &w, *manifest)
	if err != nil {
		return err
	}
	m, err := dataset.ReadManifest(mpath)
	if err != nil {
		return err
	}
	adm := kc.NewAdmin(kc.New(tg.BaseURL, seedHTTPClient()), tg.Admin)
	what := "tenants"
	if m.Files != nil {
		what = "realms"
	}
	v, err := dataset.Verify(ctx, adm, m, progressBar(e, *quiet, what))
	if err != nil {
		return err
	}
	if *asJSON {
		if err := cliutil.WriteJSON(e.stdout, map[string]any{"manifest": mpath, "ok": v.OK(), "expected": v.Expected, "actual": v.Actual}); err != nil {
			return err
		}
	} else {
		v.WriteText(e.stdout)
	}
	if !v.OK() {
		return errors.New("the target does not hold what the manifest says")
	}
	return nil
}

func cmdDatasetExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "dataset export", "dataset export --dir D [--manifest F | dataset flags]")
	var w stack.Where
	w.RegisterFlags(fs)
	var sf dataset.SpecFlags
	sf.RegisterFlags(fs)
	dir := fs.String("dir", "", "folder to write realm JSON files into (required)")
	manifest := fs.String("manifest", "", "export the dataset of this manifest (default: the local stack's, else the dataset flags)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	if *dir == "" {
		return usagef("dataset export: --dir is required")
	}
	spec, err := exportSpec(e, &w, &sf, *manifest)
	if err != nil {
		return err
	}
	files, err := dataset.Export(spec, *dir, progressBar(e, *quiet, "realm files"))
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %d realm files (%s mode, %d tenants) to %s\n", len(files), spec.Mode, spec.Tenants, *dir)
	return nil
}

// exportSpec takes the dataset from --manifest, else the dataset flags if
// any was set, else the local stack's manifest.
func exportSpec(e *env, w *stack.Where, sf *dataset.SpecFlags, manifest string) (dataset.Spec, error) {
	if manifest == "" && sf.Tenants == 0 && sf.Preset == "" {
		if s, err := w.Attach(e.getenv, e.logf); err == nil {
			manifest = s.State().Dir + "/dataset.json"
		}
	}
	if manifest != "" {
		m, err := dataset.ReadManifest(manifest)
		if err != nil {
			return dataset.Spec{}, err
		}
		return m.Spec, nil
	}
	return sf.Spec()
}

func cmdDatasetShow(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "dataset show", "dataset show [--manifest F]")
	var w stack.Where
	w.RegisterFlags(fs)
	manifest := fs.String("manifest", "", "dataset manifest (default: the local stack's)")
	if err := parse(fs, args, 0); err != nil {
		return err
	}
	mpath := *manifest
	if mpath == "" {
		s, err := w.Attach(e.getenv, e.logf)
		if err != nil {
			return err
		}
		mpath = s.State().Dir + "/dataset.json"
	}
	m, err := dataset.ReadManifest(mpath)
	if err != nil {
		return err
	}
	return m.WriteText(e.stdout, mpath)
}
