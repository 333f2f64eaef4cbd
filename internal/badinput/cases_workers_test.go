package badinput

import (
	"os"
	"path/filepath"
)

// workersCases: the options of a fleet that many workers run.
var workersCases = []badCase{
	{
		name:  "index-host-wait-zero",
		input: "`locus index --host-wait 0s REPO`: no time at all for a clone's host to take its steps",
		want:  "exit 2 before anything runs: the error names `--host-wait 0s` and asks for a positive duration; nothing is indexed",
		setup: func(s *sandbox) []string {
			return []string{"index", "--host-wait", "0s", "hostwait/r=" + s.simpleRepo("r").Dir}
		},
		code:  2,
		names: []string{"--host-wait 0s", "want a positive duration"},
		check: func(s *sandbox, r result) {
			if _, err := os.Stat(filepath.Join(s.data, "store", "repos", "hostwait")); err == nil {
				s.t.Error("index --host-wait 0s stored the repository")
			}
		},
	},
}
