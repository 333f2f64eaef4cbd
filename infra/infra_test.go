// Package infra holds no Go code of its own (compose files, a Helm chart,
// a Dockerfile): its test checks them offline with tools/infracheck, so
// that drift between them fails `go test ./...`.
package infra

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestInfraOffline runs tools/infracheck (its own module: compose-go, Helm's
// lint and render packages, the Kubernetes API types) on both compose files
// and on the chart, rendered with its defaults and with a schedule.
func TestInfraOffline(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command runs tools/infracheck: %v", err)
	}
	cmd := exec.Command(goBin, "run", ".",
		"-compose", "../../infra/compose.yaml", "-compose", "../../infra/milvus/compose.yaml",
		"-chart", "../../infra/helm/locus",
		"-set", "schedules[0].name=fleet-hourly,schedules[0].every=1h,schedules[0].repos=https://github.com/psf/requests.git",
		"-kinds", "StatefulSet,Service,ConfigMap,Job")
	cmd.Dir = "../tools/infracheck"
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("infracheck: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "lint clean") {
		t.Errorf("infracheck rendered no chart:\n%s", out)
	}
}

// The checks fail on what they are there to catch.
func TestInfracheckCatchesDrift(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	shared := write("compose.yaml", `services:
  worker:
    x-scaled: true
    image: locus
    volumes: [clones:/var/lib/locus]
volumes:
  clones: {}
`)
	jobLikeWorker := write("manifests.yaml", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: w}
spec:
  selector: {matchLabels: {app: locus}}
  template:
    metadata: {labels: {app: locus}}
    spec: {containers: [{name: w, image: locus}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    metadata: {labels: {app: locus}}
    spec: {restartPolicy: Never, containers: [{name: j, image: locus}]}
`)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a scaled service sharing a named volume", []string{"-compose", shared}, `named volume "clones"`},
		{"a Job whose pods a workload's selector picks", []string{"-manifests", jobLikeWorker}, "the pods of 2 workloads"},
	} {
		cmd := exec.Command("go", append([]string{"run", "."}, tc.args...)...)
		cmd.Dir = "../tools/infracheck"
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: err %v, want a failure saying %q:\n%s", tc.name, err, tc.want, out)
		}
	}
}
