package badinput

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
)

// loadCases: inputs that once came out wrong only on some machines or in
// some modes — a deeply indented file, a machine kept offline, the log of a
// clean run.
var loadCases = []badCase{
	{
		name:  "deeply-indented-py",
		input: "a `.py` file whose code sits 60 blocks deep (lines average over 300 bytes, two thirds of them indentation)",
		want:  "exit 0; the file is parsed, not skipped as minified: its nested function is in the graph",
		setup: func(s *sandbox) []string {
			r := s.repo("deep")
			var b strings.Builder
			b.WriteString("def outer(x):\n")
			for d := 1; d <= 60; d++ {
				b.WriteString(strings.Repeat("    ", d) + "if x:\n")
			}
			in := strings.Repeat("    ", 61)
			b.WriteString(in + "def deepest():\n")
			for range 400 {
				b.WriteString(in + "    y = \"" + strings.Repeat("deep ", 20) + "\"\n")
			}
			b.WriteString(in + "    return y\n")
			r.Write(map[string]string{"nested.py": b.String()})
			r.Commit("a deeply nested module")
			return []string{"index", "load/deep=" + r.Dir}
		},
		check: func(s *sandbox, r result) {
			ids := s.nodeIDs("load/deep")
			for _, id := range []string{"nested.py:outer", "nested.py:outer.deepest"} {
				if !slices.Contains(ids, id) {
					s.t.Errorf("node %s missing from the graph (%v)\n%v", id, ids, r)
				}
			}
		},
	},
	{
		name:  "hf-model-offline",
		input: "`--embedder onnx://hf/ORG/NAME` for a model not downloaded yet, with `HF_HUB_OFFLINE=1`",
		want:  "exit 2 before any work, the hub never contacted: the error names the model, the model cache directory under the data dir and offline mode (HF_HUB_OFFLINE=1); nothing is indexed",
		setup: func(s *sandbox) []string {
			var asked atomic.Int32
			hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				asked.Add(1)
				http.NotFound(w, r)
			}))
			s.t.Cleanup(func() {
				hub.Close()
				if n := asked.Load(); n > 0 {
					s.t.Errorf("offline, yet the hub was asked %d times", n)
				}
			})
			s.env = append(s.env, "HF_HUB_OFFLINE=1", "LOCUS_HF_ENDPOINT="+hub.URL)
			s.vars["MODELS"] = filepath.Join(s.data, "models", "acme", "tiny")
			return []string{"index", "--embedder", "onnx://hf/acme/tiny", "load/hf=" + s.simpleRepo("r").Dir}
		},
		code:  2,
		names: []string{"acme/tiny", "not in the local model cache", "{{MODELS}}", "offline mode is on (HF_HUB_OFFLINE=1)"},
		check: func(s *sandbox, r result) { s.notIndexed("load/hf") },
	},
	{
		name:  "clean-index-log",
		input: "a clean `locus index` run, then one whose repository path does not exist",
		want:  "exit 0, then exit 1 naming the path; neither prints a warning or error line about a canceled context (\"context canceled\")",
		setup: func(s *sandbox) []string {
			if r := s.locus("index", "load/clean="+s.simpleRepo("r").Dir); r.code != 0 || strings.Contains(r.stderr, "context canceled") || strings.Contains(r.stderr, "level=WARN") || strings.Contains(r.stderr, "level=ERROR") {
				s.t.Errorf("clean run: want exit 0 and no warning or error line\n%v", r)
			}
			s.vars["MISSING"] = filepath.Join(s.dir, "missing")
			return []string{"index", "load/missing=" + filepath.Join(s.dir, "missing")}
		},
		code:  1,
		names: []string{"{{MISSING}}"},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stderr, "context canceled") {
				s.t.Errorf("a clean error printed a line about a canceled context:\n%v", r)
			}
			s.indexed("load/clean")
			s.notIndexed("load/missing")
		},
	},
}
