package k8s

import (
	"bytes"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	sigyaml "sigs.k8s.io/yaml"

	"gopkg.in/yaml.v3"
)

func testOptions() Options {
	return Options{Name: "kcbench-run", Namespace: "bench", Agents: 3, Image: "registry.example/kcbench:1",
		RunYAML: []byte("scenario: client-credentials\nexecutor: constant-arrival-rate\nrate: 300\nduration: 5m\n"),
		Dataset: []byte(`{"password":"p"}`), Target: "http://keycloak-service:8080", MgmtURLs: []string{"http://keycloak-service:9000"},
		StartAt: time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)}
}

// docs splits a YAML stream into its documents, each as JSON-compatible
// YAML for the strict decoder.
func docs(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var out [][]byte
	dec := yaml.NewDecoder(bytes.NewReader(b))
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatal(err)
		}
		d, err := yaml.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
}

// strict decodes into a Kubernetes API type, failing on any field the
// type does not have or of the wrong type.
func strict(t *testing.T, d []byte, v any) {
	t.Helper()
	if err := sigyaml.UnmarshalStrict(d, v); err != nil {
		t.Fatalf("%v\n%s", err, d)
	}
}

func TestManifestsValidateAgainstAPITypes(t *testing.T) {
	o := testOptions()
	b, err := Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	ds := docs(t, b)
	if len(ds) != 3 {
		t.Fatalf("%d documents, want ConfigMap, Secret, Job:\n%s", len(ds), b)
	}
	var cm corev1.ConfigMap
	strict(t, ds[0], &cm)
	var sec corev1.Secret
	strict(t, ds[1], &sec)
	var job batchv1.Job
	strict(t, ds[2], &job)

	if cm.Kind != "ConfigMap" || cm.APIVersion != "v1" || cm.Name != o.Name || cm.Namespace != "bench" || cm.Data["run.yaml"] != string(o.RunYAML) {
		t.Errorf("configmap %+v", cm)
	}
	if sec.Kind != "Secret" || sec.StringData["dataset.json"] != string(o.Dataset) {
		t.Errorf("secret %+v", sec)
	}
	s := job.Spec
	if job.Kind != "Job" || job.APIVersion != "batch/v1" || s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion ||
		s.Completions == nil || *s.Completions != 3 || s.Parallelism == nil || *s.Parallelism != 3 {
		t.Fatalf("job spec %+v", s)
	}
	p := s.Template.Spec
	if p.RestartPolicy != corev1.RestartPolicyNever || len(p.Containers) != 1 {
		t.Fatalf("pod spec %+v", p)
	}
	c := p.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"load --file " + RunFile, "--segments 3", "--start-at 2026-11-25T06:00:00Z", "--target http://keycloak-service:8080",
		"--emit-results", "--manifest " + DataFile, "--management-url http://keycloak-service:9000", "--out " + OutDir} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if len(c.Env) != 1 || c.Env[0].Name != "JOB_COMPLETION_INDEX" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil ||
		c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("env %+v", c.Env)
	}
	if c.Resources.Limits.Cpu().String() != "1" || c.Resources.Requests.Memory().String() != "512Mi" {
		t.Errorf("resources %+v", c.Resources)
	}
	// Every mount has its volume, and the volumes name the objects above.
	vols := map[string]corev1.Volume{}
	for _, v := range p.Volumes {
		vols[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		if _, ok := vols[m.Name]; !ok {
			t.Errorf("mount %s has no volume", m.Name)
		}
	}
	if vols["run"].ConfigMap == nil || vols["run"].ConfigMap.Name != cm.Name || vols["dataset"].Secret == nil || vols["dataset"].Secret.SecretName != sec.Name {
		t.Errorf("volumes %+v", p.Volumes)
	}
	// The pod template's labels select the pods the anti-affinity spreads.
	term := p.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0].PodAffinityTerm
	for k, v := range term.LabelSelector.MatchLabels {
		if s.Template.Labels[k] != v {
			t.Errorf("anti-affinity selects %s=%s, pods carry %v", k, v, s.Template.Labels)
		}
	}

	// Without a dataset: no Secret, no --manifest.
	o.Dataset, o.MgmtURLs = nil, nil
	b, err = Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	if ds := docs(t, b); len(ds) != 2 || strings.Contains(string(b), "--manifest") {
		t.Errorf("without a dataset:\n%s", b)
	}
}

// A split capacity search: no run file, every pod runs kcbench capacity
// with the search's flags and its agent flags; the objects validate as
// the load's do.
func TestCapacityManifests(t *testing.T) {
	o := testOptions()
	o.RunYAML = nil
	o.Capacity = []string{"--scenario", "client-credentials", "--start-rate", "100", "--step", "100", "--max-rate", "2000"}
	b, err := Manifests(o)
	if err != nil {
		t.Fatal(err)
	}
	ds := docs(t, b)
	if len(ds) != 2 {
		t.Fatalf("%d documents, want Secret, Job:\n%s", len(ds), b)
	}
	var sec corev1.Secret
	strict(t, ds[0], &sec)
	var job batchv1.Job
	strict(t, ds[1], &job)
	if sec.Kind != "Secret" || job.Kind != "Job" || *job.Spec.CompletionMode != batchv1.IndexedCompletion || *job.Spec.Completions != 3 {
		t.Fatalf("objects %s, %s, %+v", sec.Kind, job.Kind, job.Spec)
	}
	p := job.Spec.Template.Spec
	args := strings.Join(p.Containers[0].Args, " ")
	want := "capacity --scenario client-credentials --start-rate 100 --step 100 --max-rate 2000 --segments 3 --start-at 2026-11-25T06:00:00Z " +
		"--target http://keycloak-service:8080 --out " + OutDir + " --emit-results --quiet --management-url http://keycloak-service:9000 --manifest " + DataFile
	if args != want {
		t.Errorf("args\n%s\nwant\n%s", args, want)
	}
	vols := map[string]bool{}
	for _, v := range p.Volumes {
		vols[v.Name] = true
	}
	for _, m := range p.Containers[0].VolumeMounts {
		if !vols[m.Name] || m.Name == "run" {
			t.Errorf("mount %s: volume %v (no run file for a search)", m.Name, vols[m.Name])
		}
	}
}

func TestManifestsBadOptions(t *testing.T) {
	for name, f := range map[string]func(*Options){
		"agents 0":         func(o *Options) { o.Agents = 0 },
		"agents -1":        func(o *Options) { o.Agents = -1 },
		"agents 10001":     func(o *Options) { o.Agents = MaxAgents + 1 },
		"no image":         func(o *Options) { o.Image = "" },
		"bad name":         func(o *Options) { o.Name = "Kc_Bench" },
		"no target":        func(o *Options) { o.Target = "" },
		"empty run":        func(o *Options) { o.RunYAML = nil },
		"run and capacity": func(o *Options) { o.Capacity = []string{"--scenario", "jwks"} },
		"no start time":    func(o *Options) { o.StartAt = time.Time{} },
	} {
		o := testOptions()
		f(&o)
		if _, err := Manifests(o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The strict decoding this test relies on does fail on a misspelt field
// and on a wrong type.
func TestStrictDecodingCatches(t *testing.T) {
	b, err := Manifests(testOptions())
	if err != nil {
		t.Fatal(err)
	}
	ds := docs(t, b)
	for _, bad := range []string{
		strings.Replace(string(ds[2]), "completionMode", "completionMod", 1),
		strings.Replace(string(ds[2]), "parallelism: 3", "parallelism: three", 1),
	} {
		var job batchv1.Job
		if err := sigyaml.UnmarshalStrict([]byte(bad), &job); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}
