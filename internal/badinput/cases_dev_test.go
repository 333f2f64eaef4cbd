package badinput

import "strings"

// devCases are the developers' commands, which locus-dev runs and the locus
// binary does not carry.
var devCases = []badCase{
	{
		name:  "bench-is-locus-dev",
		input: "`locus bench scrape --repo .` (a benchmark, which is locus-dev's)",
		want:  "exit 2: `unknown command \"bench\"`, pointing at `locus-dev bench scrape --repo .`; `locus -h` does not list it",
		setup: func(s *sandbox) []string {
			if r := s.locus("-h"); r.code != 0 || strings.Contains(r.stdout, "locus bench") {
				s.t.Errorf("locus -h lists bench:\n%v", r)
			}
			return []string{"bench", "scrape", "--repo", "."}
		},
		code:  2,
		names: []string{`unknown command "bench"`, "locus-dev bench scrape --repo ."},
	},
}
