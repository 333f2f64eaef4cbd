// Command infracheck validates infra/ offline, with the libraries the real
// tools use: each compose file is loaded and checked against the Compose
// specification's schema by compose-go (what `docker compose config` runs),
// and Kubernetes manifests (`helm template` output, from stdin or a file)
// are decoded strictly into the Kubernetes API's own types, so a misspelt or
// misplaced field is an error, as the API server's validation would make it.
// A chart (-chart) is linted and rendered by Helm's own Go packages, as
// `helm lint --strict` and `helm template` do, once with its default values
// and once with each -set list. Across documents, a selector (a
// workload's, a Service's) must select the pods of exactly one workload,
// and a compose service marked `x-scaled: true` must mount no named volume,
// which its replicas would share.
//
//	go run . -compose ../../infra/compose.yaml -compose ../../infra/milvus/compose.yaml
//	go run . -chart ../../infra/helm/locus -set 'schedules[0].name=h,schedules[0].every=1h,schedules[0].repos=r' -kinds StatefulSet,Job
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
	"sort"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/strvals"
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
	var sets files
	flag.Var(&sets, "set", "with -chart: values to render it with too, as helm's --set takes them (repeatable: each is one more rendering)")
	chart := flag.String("chart", "", "a Helm chart directory to lint and render")
	manifests := flag.String("manifests", "", "Kubernetes manifests to validate: a file, or - for stdin")
	want := flag.String("kinds", "", "comma-separated kinds the manifests (or the chart's renderings, together) must contain, e.g. StatefulSet,Service")
	flag.Parse()
	if err := run(composes, *chart, sets, *manifests, *want); err != nil {
		fmt.Fprintln(os.Stderr, "infracheck:", err)
		os.Exit(1)
	}
}

func run(composes []string, chart string, sets []string, manifests, want string) error {
	for _, f := range composes {
		n, err := checkCompose(f)
		if err != nil {
			return err
		}
		fmt.Printf("%s: valid compose file, %d services\n", f, n)
	}
	if chart != "" {
		all := map[string]int{}
		for _, set := range append([]string{""}, sets...) {
			data, err := renderChart(chart, set)
			if err != nil {
				return err
			}
			kinds, err := checkManifests(data)
			if err != nil {
				return fmt.Errorf("%s rendered with %q: %w", chart, set, err)
			}
			for k, n := range kinds {
				all[k] += n
			}
			fmt.Printf("%s with %q: lint clean, valid Kubernetes manifests %v\n", chart, set, kinds)
		}
		if err := wantKinds(chart, all, want); err != nil {
			return err
		}
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
	if err := wantKinds(manifests, kinds, want); err != nil {
		return err
	}
	fmt.Printf("%s: valid Kubernetes manifests %v\n", manifests, kinds)
	return nil
}

func wantKinds(what string, kinds map[string]int, want string) error {
	for _, k := range strings.Split(want, ",") {
		if k != "" && kinds[k] == 0 {
			return fmt.Errorf("%s: no %s among the manifests (%v)", what, k, kinds)
		}
	}
	return nil
}

// renderChart lints the chart at dir with the values set (helm's --set
// syntax; empty: the defaults) as `helm lint --strict` does, and renders
// it as `helm template` does, its documents joined by "---".
func renderChart(dir, set string) ([]byte, error) {
	vals := map[string]any{}
	if set != "" {
		if err := strvals.ParseInto(set, vals); err != nil {
			return nil, fmt.Errorf("-set %q: %w", set, err)
		}
	}
	linter := lint.All(dir, vals, "default", false)
	for _, m := range linter.Messages {
		// --strict: warnings fail too; INFO (a missing icon) does not.
		if m.Severity >= support.WarningSev {
			return nil, fmt.Errorf("helm lint %s with %q: %s", dir, set, m)
		}
	}
	ch, err := loader.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load chart %s: %w", dir, err)
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "locus", Namespace: "default", Revision: 1, IsInstall: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("chart %s values %q: %w", dir, set, err)
	}
	out, err := engine.Render(ch, rv)
	if err != nil {
		return nil, fmt.Errorf("render chart %s with %q: %w", dir, set, err)
	}
	names := make([]string, 0, len(out))
	for n := range out {
		if strings.HasSuffix(n, ".yaml") && strings.TrimSpace(out[n]) != "" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", n, out[n])
	}
	return b.Bytes(), nil
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
	for _, svc := range p.Services {
		if err := checkScaled(svc); err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	return len(p.Services) + len(p.DisabledServices), nil
}

// checkScaled: a service marked x-scaled runs as several replicas, and a
// named volume would be one volume all of them mount.
func checkScaled(svc types.ServiceConfig) error {
	if scaled, _ := svc.Extensions["x-scaled"].(bool); !scaled {
		return nil
	}
	for _, v := range svc.Volumes {
		if v.Type == types.VolumeTypeVolume && v.Source != "" {
			return fmt.Errorf("service %s is scaled (x-scaled) but mounts the named volume %q at %s, which every replica would share; mount an anonymous volume (only the target path)", svc.Name, v.Source, v.Target)
		}
	}
	return nil
}

// pods is one workload's pod template labels, and the selectors that
// should pick exactly its pods.
type pods struct {
	name   string
	labels map[string]string
}

type selects struct {
	name     string
	selector map[string]string
}

// checkManifests decodes each YAML document strictly into its kind's API
// type and returns how many of each kind there are.
func checkManifests(data []byte) (map[string]int, error) {
	kinds, all, sels, err := decodeManifests(data)
	if err != nil {
		return nil, err
	}
	for _, s := range sels {
		var matched []string
		for _, p := range all {
			if matches(s.selector, p.labels) {
				matched = append(matched, p.name)
			}
		}
		if len(matched) != 1 {
			return nil, fmt.Errorf("%s selects %v, the pods of %d workloads %v; want exactly one", s.name, s.selector, len(matched), matched)
		}
	}
	return kinds, nil
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func decodeManifests(data []byte) (map[string]int, []pods, []selects, error) {
	kinds := map[string]int{}
	var all []pods
	var sels []selects
	for i, doc := range bytes.Split(data, []byte("\n---")) {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, nil, nil, fmt.Errorf("document %d: %w", i+1, err)
		}
		if head.Kind == "" {
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			return nil, nil, nil, fmt.Errorf("document %d has no kind", i+1)
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
			return nil, nil, nil, fmt.Errorf("document %d: %s %s: a kind this check does not know", i+1, head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, obj); err != nil {
			return nil, nil, nil, fmt.Errorf("document %d (%s): %w", i+1, head.Kind, err)
		}
		if err := validate(obj); err != nil {
			return nil, nil, nil, fmt.Errorf("document %d (%s): %w", i+1, head.Kind, err)
		}
		kinds[head.Kind]++
		name := head.Kind + " " + objectName(obj)
		switch o := obj.(type) {
		case *appsv1.StatefulSet:
			all = append(all, pods{name, o.Spec.Template.Labels})
			if o.Spec.Selector != nil {
				sels = append(sels, selects{name, o.Spec.Selector.MatchLabels})
			}
		case *appsv1.Deployment:
			all = append(all, pods{name, o.Spec.Template.Labels})
			if o.Spec.Selector != nil {
				sels = append(sels, selects{name, o.Spec.Selector.MatchLabels})
			}
		case *batchv1.Job:
			all = append(all, pods{name, o.Spec.Template.Labels})
		case *corev1.Service:
			if len(o.Spec.Selector) > 0 {
				sels = append(sels, selects{name, o.Spec.Selector})
			}
		}
	}
	return kinds, all, sels, nil
}

func objectName(obj any) string {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		return o.Name
	case *appsv1.Deployment:
		return o.Name
	case *batchv1.Job:
		return o.Name
	case *corev1.Service:
		return o.Name
	case *corev1.ConfigMap:
		return o.Name
	}
	return "?"
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
