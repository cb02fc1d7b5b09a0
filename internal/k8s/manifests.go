// Package k8s writes the Kubernetes objects that run a kcbench load as N
// agents, one pod each of an Indexed Job, and reads their results back
// from the pods' logs. There is no coordinator: every pod runs the same
// run file with --segments N, takes its index from the Job
// (JOB_COMPLETION_INDEX), starts at the common --start-at, and prints its
// result folder as a bundle (results.WriteBundle) on stdout, which
// `kcbench k8s collect` reads from `kubectl logs`.
//
// The objects are written from small local types with yaml.v3, so the
// binary carries no Kubernetes client library; the tests decode them
// strictly into the k8s.io/api types.
package k8s

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"
)

// MaxAgents bounds --agents (load.MaxSegments).
const MaxAgents = 10_000

// Paths inside the agent pods.
const (
	RunDir     = "/etc/kcbench"
	RunFile    = RunDir + "/run.yaml"
	DatasetDir = "/etc/kcbench-dataset"
	DataFile   = DatasetDir + "/dataset.json"
	OutDir     = "/results/out"
)

// Options are what `kcbench k8s manifests` takes.
type Options struct {
	Name      string // of the Job, ConfigMap and Secret; a DNS label
	Namespace string // "" leaves it to kubectl's context
	Agents    int
	Image     string // holding kcbench on its PATH
	RunYAML   []byte // the run file (kcbench load --file)
	// Capacity, when set instead of RunYAML, are the flags of a split
	// capacity search (kcbench capacity FLAGS… --segments N): every pod
	// runs its share of the fixed schedule.
	Capacity []string
	Dataset  []byte   // the dataset manifest (dataset.json), or nil
	Target   string   // Keycloak's URL as the pods reach it
	MgmtURLs []string // its pods' management URLs (server CPU summed over them), or none
	StartAt  time.Time
	CPU      string // request and limit per agent, e.g. "1"
	Memory   string // request and limit per agent, e.g. "512Mi"
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Validate reports every problem at once.
func (o Options) Validate() error {
	var errs []error
	add := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	if len(o.Name) > 52 || !dnsLabel.MatchString(o.Name) { // 63 less the pods' suffix
		add("name %q: want a DNS label of at most 52 characters (a-z, 0-9, -)", o.Name)
	}
	if o.Namespace != "" && (len(o.Namespace) > 63 || !dnsLabel.MatchString(o.Namespace)) {
		add("namespace %q: want a DNS label", o.Namespace)
	}
	if o.Agents < 1 || o.Agents > MaxAgents {
		add("agents: %d: must be between 1 and %d", o.Agents, MaxAgents)
	}
	if o.Image == "" {
		add("image: required (an image with kcbench on its PATH)")
	}
	switch {
	case len(o.RunYAML) == 0 && o.Capacity == nil:
		add("run file: empty")
	case len(o.RunYAML) > 0 && o.Capacity != nil:
		add("a run file and a capacity search: give one")
	}
	if o.Target == "" {
		add("target: required (Keycloak's URL as the pods reach it, e.g. http://keycloak-service:8080)")
	}
	if o.StartAt.IsZero() {
		add("start time: required")
	}
	return errors.Join(errs...)
}

// The objects, as far as kcbench fills them; field names as in the
// Kubernetes API.
type (
	meta struct {
		Name      string            `yaml:"name"`
		Namespace string            `yaml:"namespace,omitempty"`
		Labels    map[string]string `yaml:"labels,omitempty"`
	}
	configMap struct {
		APIVersion string            `yaml:"apiVersion"`
		Kind       string            `yaml:"kind"`
		Metadata   meta              `yaml:"metadata"`
		Data       map[string]string `yaml:"data,omitempty"`
		StringData map[string]string `yaml:"stringData,omitempty"`
		Type       string            `yaml:"type,omitempty"`
	}
	job struct {
		APIVersion string  `yaml:"apiVersion"`
		Kind       string  `yaml:"kind"`
		Metadata   meta    `yaml:"metadata"`
		Spec       jobSpec `yaml:"spec"`
	}
	jobSpec struct {
		CompletionMode string      `yaml:"completionMode"`
		Completions    int         `yaml:"completions"`
		Parallelism    int         `yaml:"parallelism"`
		BackoffLimit   int         `yaml:"backoffLimit"`
		Template       podTemplate `yaml:"template"`
	}
	podTemplate struct {
		Metadata meta    `yaml:"metadata"`
		Spec     podSpec `yaml:"spec"`
	}
	podSpec struct {
		RestartPolicy string      `yaml:"restartPolicy"`
		Affinity      any         `yaml:"affinity,omitempty"`
		Containers    []container `yaml:"containers"`
		Volumes       []volume    `yaml:"volumes"`
	}
	container struct {
		Name            string         `yaml:"name"`
		Image           string         `yaml:"image"`
		Args            []string       `yaml:"args"`
		Env             []envVar       `yaml:"env"`
		Resources       resources      `yaml:"resources"`
		VolumeMounts    []volumeMount  `yaml:"volumeMounts"`
		SecurityContext map[string]any `yaml:"securityContext"`
	}
	envVar struct {
		Name      string `yaml:"name"`
		ValueFrom any    `yaml:"valueFrom"`
	}
	resources struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	}
	volumeMount struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly,omitempty"`
	}
	volume struct {
		Name      string         `yaml:"name"`
		ConfigMap map[string]any `yaml:"configMap,omitempty"`
		Secret    map[string]any `yaml:"secret,omitempty"`
		EmptyDir  map[string]any `yaml:"emptyDir,omitempty"`
	}
)

// Manifests returns the objects as one YAML stream: a ConfigMap with the
// run file (none for a capacity search), a Secret with the dataset
// manifest (its users' password and clients' secrets) when there is one,
// and the Indexed Job.
func Manifests(o Options) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	o.CPU = cmpOr(o.CPU, "1")
	o.Memory = cmpOr(o.Memory, "512Mi")
	labels := map[string]string{"app.kubernetes.io/name": "kcbench", "app.kubernetes.io/instance": o.Name}
	m := func(name string) meta { return meta{Name: name, Namespace: o.Namespace, Labels: labels} }
	var docs []any
	var mounts []volumeMount
	var vols []volume
	args := append([]string{"capacity"}, o.Capacity...)
	if o.Capacity == nil {
		docs = append(docs, configMap{APIVersion: "v1", Kind: "ConfigMap", Metadata: m(o.Name), Data: map[string]string{"run.yaml": string(o.RunYAML)}})
		args = []string{"load", "--file", RunFile}
		mounts = append(mounts, volumeMount{Name: "run", MountPath: RunDir, ReadOnly: true})
		vols = append(vols, volume{Name: "run", ConfigMap: map[string]any{"name": o.Name}})
	}
	mounts = append(mounts, volumeMount{Name: "results", MountPath: "/results"})
	vols = append(vols, volume{Name: "results", EmptyDir: map[string]any{}})
	args = append(args, "--segments", strconv.Itoa(o.Agents),
		"--start-at", o.StartAt.UTC().Format(time.RFC3339Nano), "--target", o.Target,
		"--out", OutDir, "--emit-results", "--quiet")
	for _, u := range o.MgmtURLs {
		args = append(args, "--management-url", u)
	}
	if len(o.Dataset) > 0 {
		docs = append(docs, configMap{APIVersion: "v1", Kind: "Secret", Metadata: m(o.Name + "-dataset"), Type: "Opaque",
			StringData: map[string]string{"dataset.json": string(o.Dataset)}})
		args = append(args, "--manifest", DataFile)
		mounts = append(mounts, volumeMount{Name: "dataset", MountPath: DatasetDir, ReadOnly: true})
		vols = append(vols, volume{Name: "dataset", Secret: map[string]any{"secretName": o.Name + "-dataset"}})
	}
	res := map[string]string{"cpu": o.CPU, "memory": o.Memory}
	docs = append(docs, job{APIVersion: "batch/v1", Kind: "Job", Metadata: m(o.Name), Spec: jobSpec{
		CompletionMode: "Indexed", Completions: o.Agents, Parallelism: o.Agents,
		Template: podTemplate{Metadata: meta{Name: o.Name, Labels: labels}, Spec: podSpec{
			RestartPolicy: "Never",
			// Agents on different nodes where possible: one node's
			// network and CPU are what a split run gets away from.
			Affinity: map[string]any{"podAntiAffinity": map[string]any{
				"preferredDuringSchedulingIgnoredDuringExecution": []any{map[string]any{
					"weight": 100,
					"podAffinityTerm": map[string]any{
						"topologyKey":   "kubernetes.io/hostname",
						"labelSelector": map[string]any{"matchLabels": labels},
					},
				}},
			}},
			Containers: []container{{
				Name: "kcbench", Image: o.Image, Args: args,
				// Kubernetes sets JOB_COMPLETION_INDEX itself since 1.22;
				// from the annotation it works on every version.
				Env: []envVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: map[string]any{"fieldRef": map[string]any{
					"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
				Resources:    resources{Requests: res, Limits: res},
				VolumeMounts: mounts,
				SecurityContext: map[string]any{"runAsNonRoot": true, "runAsUser": 65532, "allowPrivilegeEscalation": false,
					"readOnlyRootFilesystem": true, "capabilities": map[string]any{"drop": []string{"ALL"}}},
			}},
			Volumes: vols,
		}},
	}})
	var b bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
		enc.Close()
	}
	return b.Bytes(), nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
