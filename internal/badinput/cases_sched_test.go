package badinput

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/locus-dev/locus/internal/testutil/testlog"
)

// schedCases: schedules and status that say what happened, and the smaller
// messages of schedule, status, triplets and help.
var schedCases = []badCase{
	{
		name:  "sched-bad-line-run-failed",
		input: "a schedule's repos file edited to hold a bad line (`acme/bad name=/x`), then a run (a worker running)",
		want:  "the run is shown failed, with the file, the line and what is wrong, by `schedule describe`, `schedule list` and `status` (with --temporal, or without while `locus worker` runs the data directory's server); the worker logs one line for the failed run",
		setup: func(s *sandbox) []string {
			addr, _ := s.startWorker()
			r := s.simpleRepo("r")
			file := filepath.Join(s.dir, "fleet.txt")
			s.vars["FILE"] = file
			s.vars["ADDR"] = addr
			writeFile(s, "fleet.txt", "sched/r="+r.Dir+"\n")
			if res := s.locus("schedule", "create", "hourly", "--temporal", addr, "--every", "1h", "--repos-file", file); res.code != 0 {
				s.t.Fatalf("create: %v", res)
			}
			writeFile(s, "fleet.txt", "sched/r="+r.Dir+"\nacme/bad name=/x\n")
			if res := s.locus("schedule", "trigger", "hourly", "--temporal", addr); res.code != 0 {
				s.t.Fatalf("trigger: %v", res)
			}
			s.waitRunEnded("hourly", addr)
			return []string{"schedule", "describe", "hourly", "--temporal", addr}
		},
		code:  0,
		names: []string{"failed", `error: schedule repos file: {{FILE}}:2: repository spec "acme/bad name=/x"`},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stdout, "finished") {
				s.t.Errorf("describe still says finished:\n%v", r)
			}
			want := s.expand(`failed: schedule repos file: {{FILE}}:2: repository spec "acme/bad name=/x"`)
			if l := s.locus("schedule", "list", "--temporal", s.vars["ADDR"]); l.code != 0 || !strings.Contains(l.stdout, want) {
				s.t.Errorf("schedule list does not show the failed run with %q:\n%v", want, l)
			}
			if st := s.locus("status", "--temporal", s.vars["ADDR"]); st.code != 0 || !strings.Contains(st.stdout, want) {
				s.t.Errorf("status --temporal does not show the failed run with %q:\n%v", want, st)
			}
			// The worker runs the data directory's embedded server: status
			// asks it without --temporal.
			if st := s.locus("status"); st.code != 0 || !strings.Contains(st.stdout, want) {
				s.t.Errorf("status does not show the failed run with %q:\n%v", want, st)
			}
			if log := s.workerLog(); strings.Count(log, "scheduled run failed") != 1 || !strings.Contains(log, s.expand("{{FILE}}:2:")) {
				s.t.Errorf("the worker did not log the failed run once, with the line:\n%s", log)
			}
		},
	},
	{
		name:  "sched-trigger-no-worker",
		input: "`locus schedule trigger NAME --temporal ADDR` against a Temporal server no worker polls",
		want:  "exit 0: the run is requested, and a warning says no worker polls task queue locus-index on ADDR, so nothing runs the schedule until one does; `schedule describe` counts the run as waiting for a worker",
		setup: func(s *sandbox) []string {
			addr := freePort(s)
			s.vars["ADDR"] = addr
			s.start("server", "--address", addr)
			waitListening(s, addr)
			writeFile(s, "fleet.txt", "sched/r="+s.simpleRepo("r").Dir+"\n")
			if res := s.locus("schedule", "create", "hourly", "--temporal", addr, "--every", "1h", "--repos-file", filepath.Join(s.dir, "fleet.txt")); res.code != 0 ||
				!strings.Contains(res.stderr, "no worker polls task queue locus-index") {
				s.t.Fatalf("create did not warn that no worker polls:\n%v", res)
			}
			return []string{"schedule", "trigger", "--temporal", addr, "hourly"}
		},
		code:  0,
		names: []string{"a run is requested", "no worker polls task queue locus-index on {{ADDR}}", "nothing runs this schedule until one does"},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stdout, "trigger done") {
				s.t.Errorf("trigger says it is done:\n%v", r)
			}
			// describe counts the run, waiting for a worker.
			deadline, limited := giveUp(s.t)
			for {
				d := s.locus("schedule", "describe", "hourly", "--temporal", s.vars["ADDR"])
				if d.code == 0 && strings.Contains(d.stdout, "1 started") && strings.Contains(d.stdout, "waiting for a worker") && strings.Contains(d.stderr, "no worker polls") {
					break
				}
				if limited && time.Now().After(deadline) {
					s.t.Fatalf("describe never showed the run waiting for a worker:\n%v", d)
				}
				time.Sleep(200 * time.Millisecond)
			}
		},
	},
	{
		name:  "sched-trigger-embedded-no-worker",
		input: "`locus schedule trigger NAME` with no --temporal and no `locus worker` running",
		want:  "exit 0: the run is requested, and a warning says the embedded server stops with the command and runs start only while `locus worker` runs",
		setup: func(s *sandbox) []string {
			writeFile(s, "fleet.txt", "sched/r="+s.simpleRepo("r").Dir+"\n")
			if res := s.locus("schedule", "create", "hourly", "--every", "1h", "--repos-file", filepath.Join(s.dir, "fleet.txt")); res.code != 0 {
				s.t.Fatalf("create: %v", res)
			}
			return []string{"schedule", "trigger", "hourly"}
		},
		code:  0,
		names: []string{"a run is requested", "no worker runs this schedule", `runs start only while "locus worker" runs`},
	},
	{
		name:  "garbage-manifest-advice-works",
		input: "a repository's manifest.json overwritten with garbage, then `locus status`, then exactly the command its advice gives",
		want:  "status exits 1 naming the damaged manifest and advising `locus index NAME=SOURCE` with the source of the last run; that command exits 0, re-indexes the repository from its source (the damaged file kept as manifest.damaged.json) and status is clean again",
		setup: func(s *sandbox) []string {
			r := s.simpleRepo("r")
			if res := s.locus("index", "dmg/r="+r.Dir); res.code != 0 {
				s.t.Fatalf("index: %v", res)
			}
			writeFile(s, "data/store/repos/dmg/r/manifest.json", "{garbage")
			st := s.locus("status")
			if st.code != 1 || !strings.Contains(st.stderr, "DAMAGED dmg/r") {
				s.t.Fatalf("status of a damaged manifest:\n%v", st)
			}
			_, advice, ok := strings.Cut(st.stderr, "index the repository again from its source: locus ")
			advice, _, _ = strings.Cut(advice, " (")
			if !ok || advice != "index dmg/r="+r.Dir {
				s.t.Fatalf("status advises %q, want index dmg/r=%s:\n%v", advice, r.Dir, st)
			}
			return strings.Fields(advice)
		},
		code:  0,
		names: []string{"dmg/r", "1 done, 0 failed"},
		check: func(s *sandbox, r result) {
			s.indexed("dmg/r")
			kept, err := os.ReadFile(filepath.Join(s.store(), "repos", "dmg", "r", "manifest.damaged.json"))
			if err != nil || string(kept) != "{garbage" {
				s.t.Errorf("the damaged manifest is not kept: %q, %v", kept, err)
			}
			if st := s.locus("status"); st.code != 0 || strings.Contains(st.stderr, "DAMAGED") || !strings.Contains(st.stdout, "dmg/r") {
				s.t.Errorf("status after following its advice:\n%v", st)
			}
		},
	},
	{
		name:  "garbage-manifest-other-repository",
		input: "a repository's manifest.json overwritten with garbage, then `locus index` of another repository under its name",
		want:  "exit 1: the error says the name holds the history of another repository and names the damaged manifest; the stored history, and the damaged manifest, stay as they were",
		setup: func(s *sandbox) []string {
			if res := s.locus("index", "dmg/r="+s.simpleRepo("r").Dir); res.code != 0 {
				s.t.Fatalf("index: %v", res)
			}
			writeFile(s, "data/store/repos/dmg/r/manifest.json", "{garbage")
			snap, err := snapshot(filepath.Join(s.store(), "repos", "dmg", "r"))
			if err != nil {
				s.t.Fatal(err)
			}
			s.vars["SNAP"] = strings.Join(sortedSnap(snap), ",")
			other := s.repo("other")
			other.Write(map[string]string{"other.py": "def other():\n    return 0\n"})
			other.Commit("another project")
			return []string{"index", "dmg/r=" + other.Dir}
		},
		code:  1,
		names: []string{"dmg/r", "the name holds the history of another repository", "repos/dmg/r/manifest.json"},
		check: func(s *sandbox, r result) {
			snap, err := snapshot(filepath.Join(s.store(), "repos", "dmg", "r"))
			if err != nil {
				s.t.Fatal(err)
			}
			if got := strings.Join(sortedSnap(snap), ","); got != s.vars["SNAP"] {
				s.t.Errorf("the stored files of dmg/r changed:\nbefore %s\nafter  %s", s.vars["SNAP"], got)
			}
		},
	},
	{
		name:  "triplets-indexed-empty-repo",
		input: "`locus triplets` of a repository that is indexed but has no commits",
		want:  "exit 1: the error says the repository is indexed from its source but has no commits (nothing to mine), not that it must be indexed",
		setup: func(s *sandbox) []string {
			r := s.repo("empty")
			s.vars["SRC"] = r.Dir
			if res := s.locus("index", "empty/r="+r.Dir); res.code != 0 {
				s.t.Fatalf("index: %v", res)
			}
			return []string{"triplets", "--out", filepath.Join(s.dir, "out"), "empty/r"}
		},
		code:  1,
		names: []string{"empty/r", "indexed from {{SRC}}, which has no commits (nothing to mine)"},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stdout+r.stderr, "run locus index") {
				s.t.Errorf("an indexed repository is told to be indexed:\n%v", r)
			}
		},
	},
	{
		name:  "triplets-out-not-a-directory",
		input: "`locus triplets --out F` where F is a regular file",
		want:  "exit 2 before any mining: the error names `--out` and the path and says it wants a directory",
		setup: func(s *sandbox) []string {
			writeFile(s, "out.txt", "not a directory\n")
			return []string{"triplets", "--out", "out.txt", baseRepo}
		},
		code:  2,
		names: []string{`--out "out.txt"`, "want a directory"},
		check: func(s *sandbox, r result) {
			if _, err := os.Stat(filepath.Join(s.data, "temporal")); err == nil {
				s.t.Error("triplets started the Temporal server before checking --out")
			}
		},
	},
	{
		name:  "status-json-empty-repo-parts",
		input: "`locus status --json` of an indexed repository that has no commits",
		want:  "exit 0: its `parts` is an empty list, never null",
		setup: func(s *sandbox) []string {
			if res := s.locus("index", "empty/r="+s.repo("empty").Dir); res.code != 0 {
				s.t.Fatalf("index: %v", res)
			}
			return []string{"status", "--json", "empty/r", baseRepo}
		},
		code:  0,
		names: []string{`"parts": []`},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stdout, `"parts": null`) {
				s.t.Errorf("status --json shows parts as null:\n%v", r)
			}
			var ms []manifestJSON
			if err := json.Unmarshal([]byte(r.stdout), &ms); err != nil || len(ms) != 2 || len(ms[1].Parts) == 0 {
				s.t.Errorf("status --json: %v; want both repositories, %s with its parts:\n%v", err, baseRepo, r)
			}
		},
	},
	flagCase("sched-every-negative", []string{"schedule", "create", "n", "--every", "-1h", "--repos-file", "fleet.txt"}, "--every -1h0m0s", "want a positive interval of at least 1s"),
	flagCase("sched-every-tiny", []string{"schedule", "create", "n", "--every", "10ms", "--repos-file", "fleet.txt"}, "--every 10ms", "want at least 1s"),
	flagCase("sched-cron-out-of-range", []string{"schedule", "create", "n", "--cron", "99 * * * *", "--repos-file", "fleet.txt"}, `--cron "99 * * * *"`, "Minute is not in range [0-59]"),
	flagCase("sched-cron-four-fields", []string{"schedule", "create", "n", "--cron", "0 3 * *", "--repos-file", "fleet.txt"}, `--cron "0 3 * *"`, "want 5 to 7 fields"),
	{
		name:  "sched-flags-before-name",
		input: "`locus schedule trigger --temporal ADDR NAME` (the flags before the NAME), with nothing listening at ADDR",
		want:  "the NAME is found: exit 1 because the server at ADDR cannot be reached (the error names ADDR), never \"needs a NAME\"",
		setup: func(s *sandbox) []string {
			s.vars["ADDR"] = freePort(s)
			return []string{"schedule", "trigger", "--temporal", s.vars["ADDR"], "hourly"}
		},
		code:  1,
		names: []string{"connect to Temporal at {{ADDR}}"},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stderr, "needs a NAME") {
				s.t.Errorf("the NAME after the flags was not found:\n%v", r)
			}
		},
	},
	helpCase("help-lists-every-command", []string{"--help"}, "schedule create|list|describe|pause|unpause|trigger|backfill|delete",
		"locus triplets stats DIR", "locus triplets fit DIR", "locus eval"),
	helpCase("help-schedule-trigger-names-name", []string{"schedule", "trigger", "--help"}, "usage: locus schedule trigger NAME"),
	helpCase("help-schedule-delete-names-name", []string{"schedule", "delete", "--help"}, "usage: locus schedule delete NAME"),
}

// helpCase is a help that must exit 0 and name each of want.
func helpCase(name string, args []string, want ...string) badCase {
	return badCase{
		name:  name,
		input: "`locus " + strings.Join(args, " ") + "`",
		want:  "exit 0; the help names " + "`" + strings.Join(want, "`, `") + "`",
		setup: func(s *sandbox) []string { return args },
		code:  0,
		names: want,
	}
}

// workerLogs hold the output of each sandbox's `locus worker`.
var workerLogs sync.Map // *sandbox → *testlog.Buffer

// startWorker starts `locus worker` (its embedded Temporal server on a
// free port) in the background, waits until it listens and returns the
// address; the test's cleanup ends it.
func (s *sandbox) startWorker() (string, *exec.Cmd) {
	s.t.Helper()
	addr := freePort(s)
	cmd := locusCmd(context.Background(), s.t, s.data, s.dir, s.env, "worker", "--embedded-address", addr)
	out := &testlog.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start locus worker: %v", err)
	}
	workerLogs.Store(s, out)
	s.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	waitListening(s, addr)
	return addr, cmd
}

// workerLog is what the sandbox's worker printed so far.
func (s *sandbox) workerLog() string {
	if b, ok := workerLogs.Load(s); ok {
		return b.(*testlog.Buffer).String()
	}
	return ""
}

// waitListening waits until something accepts connections at addr.
func waitListening(s *sandbox, addr string) {
	s.t.Helper()
	deadline, limited := giveUp(s.t)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if limited && time.Now().After(deadline) {
			s.t.Fatalf("nothing listens at %s before the test's deadline: %v", addr, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitRunEnded waits until schedule name's latest run has ended, as
// `schedule describe --json` says.
func (s *sandbox) waitRunEnded(name, addr string) {
	s.t.Helper()
	deadline, limited := giveUp(s.t)
	for {
		res := s.locus("schedule", "describe", name, "--json", "--temporal", addr)
		var v struct {
			Runs []struct {
				State string `json:"state"`
			} `json:"runs"`
		}
		if res.code == 0 && json.Unmarshal([]byte(res.stdout), &v) == nil && len(v.Runs) > 0 && !slices.Contains([]string{"running", "waiting for a worker"}, v.Runs[len(v.Runs)-1].State) {
			return
		}
		if limited && time.Now().After(deadline) {
			s.t.Fatalf("schedule %s: no run ended before the test's deadline:\n%v", name, res)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sortedSnap is a snapshot as sorted "file=hash" entries.
func sortedSnap(snap map[string]string) []string {
	out := make([]string, 0, len(snap))
	for f, h := range snap {
		out = append(out, f+"="+h)
	}
	sort.Strings(out)
	return out
}
