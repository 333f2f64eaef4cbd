package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	allow := []allowEntry{
		{pkg: "m/milvus", test: "TestLive", reason: "needs a live Milvus"},
		{pkg: "m/x", test: "TestOptional*", reason: "opt-in"},
	}
	tests := []struct {
		name             string
		in               string
		failed, bad, ok  int
		outHas, outLacks string
	}{
		{
			name: "pass",
			in: `{"Action":"run","Package":"m/a","Test":"TestA"}
{"Action":"output","Package":"m/a","Test":"TestA","Output":"noise\n"}
{"Action":"pass","Package":"m/a","Test":"TestA"}
{"Action":"pass","Package":"m/a","Elapsed":1.5}`,
			outHas: "ok  \tm/a\t1.5s", outLacks: "noise",
		},
		{
			name: "forbidden skip",
			in: `{"Action":"output","Package":"m/s3","Test":"TestS3","Output":"    s3_test.go:10: versitygw not found\n"}
{"Action":"output","Package":"m/s3","Test":"TestS3","Output":"--- SKIP: TestS3 (0.00s)\n"}
{"Action":"skip","Package":"m/s3","Test":"TestS3"}`,
			bad: 1,
		},
		{
			name: "allowed skips",
			in: `{"Action":"skip","Package":"m/milvus","Test":"TestLive"}
{"Action":"skip","Package":"m/x","Test":"TestOptionalThing"}`,
			ok: 2,
		},
		{
			name: "allowed name in another package is not allowed",
			in:   `{"Action":"skip","Package":"m/other","Test":"TestLive"}`,
			bad:  1,
		},
		{
			name: "failure shows its output",
			in: `{"Action":"output","Package":"m/a","Test":"TestB","Output":"    a_test.go:3: boom\n"}
{"Action":"fail","Package":"m/a","Test":"TestB"}
{"Action":"fail","Package":"m/a","Elapsed":0.2}`,
			failed: 1, outHas: "boom",
		},
		{
			name: "build failure events (Go 1.24+)",
			in: `{"ImportPath":"m/b","Action":"build-output","Output":"b.go:2:1: undefined: x\n"}
{"ImportPath":"m/b","Action":"build-fail"}
{"Action":"fail","Package":"m/b","Elapsed":0,"FailedBuild":"m/b"}`,
			failed: 1, outHas: "undefined: x",
		},
		{
			name:   "build errors pass through",
			in:     "# m/a\na.go:1: syntax error\n" + `{"Action":"fail","Package":"m/a"}`,
			outHas: "a.go:1: syntax error",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			r := check(strings.NewReader(tc.in), &out, allow)
			if r.failed != tc.failed || len(r.badSkips) != tc.bad || len(r.allowedSkips) != tc.ok {
				t.Errorf("failed %d, forbidden skips %v, allowed %v; want %d, %d, %d", r.failed, r.badSkips, r.allowedSkips, tc.failed, tc.bad, tc.ok)
			}
			if tc.outHas != "" && !strings.Contains(out.String(), tc.outHas) {
				t.Errorf("output lacks %q:\n%s", tc.outHas, out.String())
			}
			if tc.outLacks != "" && strings.Contains(out.String(), tc.outLacks) {
				t.Errorf("output has %q:\n%s", tc.outLacks, out.String())
			}
		})
	}
	var out bytes.Buffer
	r := check(strings.NewReader(tests[1].in), &out, allow)
	if len(r.badSkips) != 1 || !strings.Contains(r.badSkips[0], "versitygw not found") {
		t.Errorf("forbidden skip should carry the test's reason: %v", r.badSkips)
	}
}

func TestReadAllow(t *testing.T) {
	p := filepath.Join(t.TempDir(), "allow")
	os.WriteFile(p, []byte("# comment\n\nm/p TestX needs a thing\n"), 0o644)
	got, err := readAllow(p)
	if err != nil || len(got) != 1 || got[0] != (allowEntry{"m/p", "TestX", "needs a thing"}) {
		t.Fatalf("readAllow = %v, %v", got, err)
	}
	os.WriteFile(p, []byte("m/p TestX\n"), 0o644)
	if _, err := readAllow(p); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Fatalf("a line without a reason should be refused with its line number, got %v", err)
	}
}

// TestRealGoTestSkip runs go test -json on a throwaway module whose only test
// skips, and checks the exit status of the real command.
func TestRealGoTestSkip(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a throwaway module")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/s\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "s_test.go"), []byte("package s\nimport \"testing\"\nfunc TestNeedsServer(t *testing.T) { t.Skip(\"no server\") }\n"), 0o644)
	cmd := exec.Command("go", "test", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	js, err := cmd.Output()
	if err != nil {
		t.Fatalf("go test -json: %v", err)
	}
	var out bytes.Buffer
	r := check(bytes.NewReader(js), &out, nil)
	if len(r.badSkips) != 1 || !strings.Contains(r.badSkips[0], "TestNeedsServer: ") || !strings.Contains(r.badSkips[0], "no server") {
		t.Fatalf("want one forbidden skip naming the test and its reason, got %v\n%s", r.badSkips, out.String())
	}
}
