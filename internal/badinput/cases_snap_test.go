package badinput

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// snapCases are snapshots derived from stored indexes that are damaged.
var snapCases = []badCase{
	{
		name:  "snapshot-damaged-extracts",
		input: "`locus localize --ref` of an older commit when the indexed head's kept extractions (`graph/<head>/extracts.gob.zst`), which the snapshot would be derived from, are overwritten with garbage",
		want:  "exit 0: a warning names the damaged object (`are damaged; not derived from it`, its key); the snapshot is built from scratch (no `base` in its manifest), every function of the commit ranked; the head's indexes are left as they are",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			s.vars["OLD"] = r.Head()
			r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 3\n\n\ndef other(n):\n    return helper(n)\n"})
			r.Commit("triple")
			if res := s.locus("index", "snap/r="+r.Dir); res.code != 0 {
				s.t.Fatalf("index: %v", res)
			}
			s.vars["KEY"] = filepath.Join(s.store(), "repos", "snap", "r", "graph", r.Head(), "extracts.gob.zst")
			if err := os.WriteFile(s.vars["KEY"], []byte("garbage"), 0o644); err != nil {
				s.t.Fatal(err)
			}
			return []string{"localize", "--repo", "snap/r", "--ref", s.vars["OLD"], "--json", "helper doubles the number"}
		},
		code:  0,
		names: []string{"are damaged; not derived from it", "extracts.gob.zst"},
		check: func(s *sandbox, r result) {
			data, err := os.ReadFile(filepath.Join(s.store(), "repos", "snap", "r", "snapshots", s.vars["OLD"], "manifest.json"))
			if err != nil {
				s.t.Fatalf("snapshot manifest: %v", err)
			}
			var m struct {
				Base  string `json:"base"`
				Graph struct {
					Nodes int `json:"nodes"`
				} `json:"graph"`
			}
			if err := json.Unmarshal(data, &m); err != nil {
				s.t.Fatal(err)
			}
			if m.Base != "" || m.Graph.Nodes == 0 {
				s.t.Errorf("snapshot derived from %q with %d nodes: want one built from scratch", m.Base, m.Graph.Nodes)
			}
			if !strings.Contains(r.stdout, "lib.py:helper") {
				s.t.Errorf("the old commit's function is not ranked:\n%s", r.stdout)
			}
			if got, _ := os.ReadFile(s.vars["KEY"]); string(got) != "garbage" {
				s.t.Errorf("the head's extractions were rewritten (%d bytes): a snapshot must leave the head's indexes alone", len(got))
			}
		},
	},
}
