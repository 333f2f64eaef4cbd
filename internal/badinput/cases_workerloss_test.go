package badinput

import (
	"os"
	"path/filepath"
)

// workerlossCases: the options of backlog and triplets runs that many
// workers run.
var workerlossCases = []badCase{
	{
		name:  "backlog-host-wait-zero",
		input: "`locus backlog --host-wait 0s FILE`: no time at all for a clone's host to build a snapshot",
		want:  "exit 2 before anything runs: the error names `--host-wait 0s` and asks for a positive duration; no run is started",
		setup: func(s *sandbox) []string {
			issues := filepath.Join(s.dir, "issues.jsonl")
			if err := os.WriteFile(issues, []byte(`{"instance_id": "a-1", "repo": "a/b", "problem_statement": "cache misses"}`+"\n"), 0o644); err != nil {
				s.t.Fatal(err)
			}
			return []string{"backlog", "--host-wait", "0s", issues}
		},
		code:  2,
		names: []string{"--host-wait 0s", "want a positive duration"},
		check: func(s *sandbox, r result) {
			if _, err := os.Stat(filepath.Join(s.data, "store", "backlogs")); err == nil {
				s.t.Error("backlog --host-wait 0s stored a run")
			}
		},
	},
	{
		name:  "triplets-host-wait-zero",
		input: "`locus triplets --host-wait 0s --out DIR REPO`: no time at all for a clone's host to mine its chunks",
		want:  "exit 2 before anything runs: the error names `--host-wait 0s` and asks for a positive duration; DIR is not created",
		setup: func(s *sandbox) []string {
			return []string{"triplets", "--host-wait", "0s", "--out", filepath.Join(s.dir, "out"), "a/b"}
		},
		code:  2,
		names: []string{"--host-wait 0s", "want a positive duration"},
		check: func(s *sandbox, r result) {
			if _, err := os.Stat(filepath.Join(s.dir, "out")); err == nil {
				s.t.Error("triplets --host-wait 0s created its --out directory")
			}
		},
	},
}
