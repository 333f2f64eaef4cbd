// Command infracheck validates infra/ offline, with the libraries the real
// tools use: each compose file is loaded and checked against the Compose
// specification's schema by compose-go (what `docker compose config` runs),
// and Kubernetes manifests (`helm template` output, from stdin or a file)
// are decoded strictly into the Kubernetes API's own types, so a misspelt or
// misplaced field is an error, as the API server's validation would make it.
//
//	go run . -compose ../../infra/compose.yaml -compose ../../infra/milvus/compose.yaml
//	helm template x ../../infra/helm/locus -f values.yaml | go run . -manifests -
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

type files []string

func (f *files) String() string     { return strings.Join(*f, ",") }
func (f *files) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	var composes files
	flag.Var(&composes, "compose", "a compose file to validate (repeatable)")
	manifests := flag.String("manifests", "", "Kubernetes manifests to validate: a file, or - for stdin")
	want := flag.String("kinds", "", "comma-separated kinds the manifests must contain, e.g. StatefulSet,Service")
	flag.Parse()
	if err := run(composes, *manifests, *want); err != nil {
		fmt.Fprintln(os.Stderr, "infracheck:", err)
		os.Exit(1)
	}
}

func run(composes []string, manifests, want string) error {
	for _, f := range composes {
		n, err := checkCompose(f)
		if err != nil {
			return err
		}
		fmt.Printf("%s: valid compose file, %d services\n", f, n)
	}
	if manifests == "" {
		return nil
	}
	var data []byte
	var err error
	if manifests == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(manifests)
	}
	if err != nil {
		return err
	}
	kinds, err := checkManifests(data)
	if err != nil {
		return fmt.Errorf("%s: %w", manifests, err)
	}
	for _, k := range strings.Split(want, ",") {
		if k != "" && kinds[k] == 0 {
			return fmt.Errorf("%s: no %s among the manifests (%v)", manifests, k, kinds)
		}
	}
	fmt.Printf("%s: valid Kubernetes manifests %v\n", manifests, kinds)
	return nil
}

// checkCompose loads one compose file as `docker compose config` would.
func checkCompose(path string) (int, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return 0, err
	}
	opts, err := cli.NewProjectOptions([]string{abs}, cli.WithWorkingDirectory(filepath.Dir(abs)), cli.WithOsEnv)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(p.Services)+len(p.DisabledServices) == 0 {
		return 0, fmt.Errorf("%s: no services", path)
	}
	return len(p.Services) + len(p.DisabledServices), nil
}

// checkManifests decodes each YAML document strictly into its kind's API
// type and returns how many of each kind there are.
func checkManifests(data []byte) (map[string]int, error) {
	kinds := map[string]int{}
	for i, doc := range bytes.Split(data, []byte("\n---")) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if head.Kind == "" {
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			return nil, fmt.Errorf("document %d has no kind", i+1)
		}
		var obj any
		switch head.APIVersion + "/" + head.Kind {
		case "apps/v1/StatefulSet":
			obj = &appsv1.StatefulSet{}
		case "apps/v1/Deployment":
			obj = &appsv1.Deployment{}
		case "v1/Service":
			obj = &corev1.Service{}
		case "v1/ConfigMap":
			obj = &corev1.ConfigMap{}
		case "batch/v1/Job":
			obj = &batchv1.Job{}
		default:
			return nil, fmt.Errorf("document %d: %s %s: a kind this check does not know", i+1, head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, head.Kind, err)
		}
		if err := validate(obj); err != nil {
			return nil, fmt.Errorf("document %d (%s): %w", i+1, head.Kind, err)
		}
		kinds[head.Kind]++
	}
	return kinds, nil
}

// validate checks what the API server would refuse and a strict decode
// cannot see: containers without image, selectors that miss their pods,
// mounts of volumes that do not exist.
func validate(obj any) error {
	var spec *corev1.PodSpec
	var selector map[string]string
	var labels map[string]string
	var claims []string
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		spec, labels = &o.Spec.Template.Spec, o.Spec.Template.Labels
		if o.Spec.Selector != nil {
			selector = o.Spec.Selector.MatchLabels
		}
		for _, c := range o.Spec.VolumeClaimTemplates {
			claims = append(claims, c.Name)
		}
	case *appsv1.Deployment:
		spec, labels = &o.Spec.Template.Spec, o.Spec.Template.Labels
		if o.Spec.Selector != nil {
			selector = o.Spec.Selector.MatchLabels
		}
	case *batchv1.Job:
		spec = &o.Spec.Template.Spec
	default:
		return nil
	}
	for k, v := range selector {
		if labels[k] != v {
			return fmt.Errorf("selector %s=%s does not match the pod template's labels %v", k, v, labels)
		}
	}
	vols := map[string]bool{}
	for _, v := range spec.Volumes {
		vols[v.Name] = true
	}
	for _, c := range claims {
		vols[c] = true
	}
	if len(spec.Containers) == 0 {
		return errors.New("no containers")
	}
	for _, c := range spec.Containers {
		if c.Image == "" || c.Name == "" {
			return fmt.Errorf("container %q without a name or image", c.Name)
		}
		for _, m := range c.VolumeMounts {
			if !vols[m.Name] {
				return fmt.Errorf("container %s mounts volume %q, which the pod does not have", c.Name, m.Name)
			}
		}
	}
	return nil
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}
