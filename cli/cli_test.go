package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	failurepb "go.temporal.io/api/failure/v1"
	"go.temporal.io/sdk/temporal"
)

// runCLI runs locus with args and returns its exit status, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	oldOut, oldErr := stdout, stderr
	stdout, stderr = &out, &errOut
	defer func() { stdout, stderr = oldOut, oldErr }()
	code := run(context.Background(), args)
	return code, out.String(), errOut.String()
}

func TestHelpExitsZeroEverywhere(t *testing.T) {
	var cases [][]string
	for _, h := range []string{"-h", "--help", "help", "-help"} {
		cases = append(cases, []string{h})
	}
	for _, name := range sortedKeys(commands) {
		cases = append(cases, []string{name, "-h"}, []string{name, "--help"})
	}
	cases = append(cases, []string{"help", "index"})
	for _, sub := range scheduleCommands {
		cases = append(cases, []string{"schedule", sub, "-h"})
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, args...)
			if code != 0 || errOut != "" {
				t.Fatalf("exit %d, stderr %q; want 0 and nothing on stderr", code, errOut)
			}
			if !strings.Contains(strings.ToLower(out), "usage") {
				t.Fatalf("stdout has no usage:\n%s", out)
			}
		})
	}
}

func TestUnknownNamesSuggestTheNearest(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"indx"}, "did you mean index?"},
		{[]string{"stauts"}, "did you mean status?"},
		{[]string{"localise"}, "did you mean localize?"},
		{[]string{"index", "--windw", "3", "."}, "did you mean --window?"},
		{[]string{"localize", "--methd", "sr", "--repo", "a/b", "x"}, "did you mean --method?"},
		{[]string{"status", "-jsn"}, "did you mean --json?"},
		{[]string{"worker", "--activites", "2"}, "did you mean --activities?"},
		{[]string{"localize", "--method", "spyder", "--repo", "a/b", "x"}, "did you mean spider?"},
		{[]string{"index", "--git-backend", "catfile", "."}, "did you mean cat-file?"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.args...)
			if code != 2 {
				t.Errorf("exit %d, want 2", code)
			}
			if strings.Count(errOut, tc.want) != 1 || out != "" {
				t.Fatalf("stderr %q (stdout %q), want %q once", errOut, out, tc.want)
			}
			if n := strings.Count(errOut, "locus:"); n != 1 {
				t.Fatalf("the error is printed %d times:\n%s", n, errOut)
			}
		})
	}
	// Nothing close: no suggestion, still one message.
	code, _, errOut := runCLI(t, "frobnicate")
	if code != 2 || strings.Contains(errOut, "did you mean") || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}

// Every numeric and enumerated flag of every command is checked before any
// work starts: the data directory is never created.
func TestFlagValidation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"index", "--window", "0", "."}, "--window 0: want 1 to 1000"},
		{[]string{"index", "--window", "-1", "."}, "--window -1: want 1 to 1000"},
		{[]string{"localize", "--repo", "a/b", "--llm-concurrency", "0", "bug"}, "--llm-concurrency 0: want 1 to 256"},
		{[]string{"backlog", "--llm-concurrency", "-2", "issues.jsonl"}, "--llm-concurrency -2: want 1 to 256"},
		{[]string{"index", "--window", "1001", "."}, "--window 1001"},
		{[]string{"index", "--continue-as-new-after", "0", "."}, "--continue-as-new-after 0"},
		{[]string{"index", "--continue-as-new-after", "5001", "."}, "--continue-as-new-after 5001"},
		{[]string{"index", "--max-diff-bytes", "-1", "."}, "--max-diff-bytes -1: want at least 1"},
		{[]string{"index", "--max-blob-size", "-1", "."}, "--max-blob-size -1: want at least 0"},
		{[]string{"index", "--host-wait", "0s", "."}, "--host-wait 0s: want a positive duration"},
		{[]string{"index", "--host-wait", "-1m", "."}, "--host-wait -1m0s: want a positive duration"},
		{[]string{"index", "--git-backend", "bogus", "."}, `--git-backend "bogus": want one of`},
		{[]string{"index", "--log-level", "shout", "."}, `--log-level "shout": want one of debug, info, warn, error`},
		{[]string{"index", "--temporal", "nohost", "."}, `--temporal "nohost": want host:port`},
		{[]string{"index", "--embedder", "openai://h?dim=-3", "."}, "--embedder"},
		{[]string{"index", "--llm", "openai://host", "."}, "--llm"},
		{[]string{"index", "--vectors", "qdrant://h", "."}, `--vectors "qdrant://h"`},
		{[]string{"index", "--window", "x", "."}, `invalid value "x" for flag -window`},
		{[]string{"localize", "--k", "0", "--repo", "a/b", "bug"}, "--k 0: want 1 to 2500"},
		{[]string{"localize", "--k", "-1", "--repo", "a/b", "bug"}, "--k -1: want 1 to 2500"},
		{[]string{"localize", "--k", "2501", "--repo", "a/b", "bug"}, "--k 2501: want 1 to 2500"},
		{[]string{"backlog", "--k", "5000", "issues.jsonl"}, "--k 5000: want 1 to 2500"},
		{[]string{"localize", "--n", "-5", "--repo", "a/b", "bug"}, "--n -5"},
		{[]string{"localize", "--k", "30", "--n", "10", "--repo", "a/b", "bug"}, "at least --k (30)"},
		{[]string{"localize", "--c", "0", "--repo", "a/b", "bug"}, "--c 0: want at least 1"},
		{[]string{"localize", "--depth", "-1", "--repo", "a/b", "bug"}, "--depth -1: want at least 1"},
		{[]string{"localize", "--method", "bm25", "--repo", "a/b", "bug"}, `--method "bm25": want one of sr, der, spisr, spider`},
		{[]string{"localize", "--ref", "main", "--repo", "a/b", "bug"}, `--ref "main": want a commit id`},
		{[]string{"localize", "--log-level", "loud", "--repo", "a/b", "bug"}, `--log-level "loud"`},
		{[]string{"localize", "--llm", "anthropic://x", "--repo", "a/b", "bug"}, "--llm"},
		{[]string{"localize", "--rerank", "10", "--repo", "a/b", "bug"}, "--rerank needs an LLM: set --llm URL"},
		{[]string{"localize", "--rerank", "101", "--repo", "a/b", "bug"}, "--rerank 101: want 0 to 100"},
		{[]string{"backlog", "--rerank", "5", "issues.jsonl"}, "--rerank needs an LLM"},
		{[]string{"index", "--summaries", "."}, "--summaries needs an LLM: set --llm URL"},
		{[]string{"triplets", "--out", "x", "--format", "csv", "a/b"}, `--format "csv": want one of jsonl, swerank, cornstack, beir`},
		{[]string{"triplets", "--out", "x", "--after", "2024-13-01", "a/b"}, `--after "2024-13-01": want a date as YYYY-MM-DD`},
		{[]string{"triplets", "--out", "x", "--min-rank", "30", "--max-rank", "25", "a/b"}, "--max-rank 25: want at least 30"},
		{[]string{"triplets", "a/b"}, "triplets needs --out DIR"},
		{[]string{"triplets", "--out", "x", "--hard-from", "bm25,sparse", "a/b"}, `hard negatives from "sparse": want some of bm25,dense,graph`},
		{[]string{"triplets", "--out", "x"}, "no repositories given"},
		{[]string{"worker", "--activities", "0"}, "--activities 0"},
		{[]string{"worker", "--git-backend", "libgit2"}, `--git-backend "libgit2"`},
		{[]string{"worker", "--temporal", "host:port"}, `port "port" is not a number`},
		{[]string{"worker", "--vectors", "milvus://"}, "--vectors"},
		{[]string{"server", "--address", "7233"}, `--address "7233": want host:port`},
		{[]string{"server", "--ui-addr", "8233"}, `--ui-addr "8233": want host:port`},
		{[]string{"index", "--ui-addr", "127.0.0.1:70000", "."}, `--ui-addr "127.0.0.1:70000": port "70000" is not a number`},
		{[]string{"status", "--log-level", "verbose"}, `--log-level "verbose"`},
		{[]string{"status", "--data-dir", ""}, "--data-dir is empty"},
		{[]string{"eval", "--log-level", "x"}, `--log-level "x"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "data")
			args := append([]string{tc.args[0]}, tc.args[1:]...)
			if tc.args[0] != "status" || tc.args[2] != "" {
				args = append([]string{tc.args[0], "--data-dir", data}, tc.args[1:]...)
			}
			code, out, errOut := runCLI(t, args...)
			if code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(errOut, "locus:") != 1 || out != "" {
				t.Fatalf("stderr %q, want one message naming %q", errOut, tc.want)
			}
			if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("work started before the flags were checked: %s exists", data)
			}
		})
	}
}

func TestEnvironmentIsValidatedLikeFlags(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	t.Setenv("LOCUS_WINDOW", "-4")
	code, _, errOut := runCLI(t, "index", "--data-dir", data, ".")
	if code != 2 || !strings.Contains(errOut, "--window -4") {
		t.Fatalf("LOCUS_WINDOW=-4: exit %d, stderr %q", code, errOut)
	}
	t.Setenv("LOCUS_WINDOW", "many")
	code, _, errOut = runCLI(t, "index", "--data-dir", data, ".")
	if code != 2 || !strings.Contains(errOut, `LOCUS_WINDOW="many"`) {
		t.Fatalf("LOCUS_WINDOW=many: exit %d, stderr %q", code, errOut)
	}
}

func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/locus-dev/locus", Version: "v0.3.1"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"},
			{Key: "vcs.time", Value: "2025-01-02T03:04:05Z"}}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"release with local changes", bi, true, "locus v0.3.1 commit 0123456789ab+modified (2025-01-02T03:04:05Z) go1.26.8"},
		{"clean", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.3.1"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}}, true,
			"locus v0.3.1 commit 0123456789ab go1.26.8"},
		{"no vcs", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, true, "locus (devel) go1.26.8"},
		{"no build info", nil, false, "locus (no build information)"},
	} {
		if got := versionString(tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	code, out, errOut := runCLI(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "locus ") || errOut != "" {
		t.Fatalf("--version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestErrorMessageKeepsTheRootOnce(t *testing.T) {
	// An activity failure as the client receives it: the SDK rebuilds the
	// chain from its failure proto.
	f := &failurepb.Failure{Message: "activity error", FailureInfo: &failurepb.Failure_ActivityFailureInfo{
		ActivityFailureInfo: &failurepb.ActivityFailureInfo{ActivityType: nil, Identity: "w1"}},
		Cause: &failurepb.Failure{Message: "localize acme/x: not indexed (run locus index first)", FailureInfo: &failurepb.Failure_ApplicationFailureInfo{
			ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{Type: "BadInput", NonRetryable: true}},
			Cause: &failurepb.Failure{Message: "not indexed", FailureInfo: &failurepb.Failure_ApplicationFailureInfo{
				ApplicationFailureInfo: &failurepb.ApplicationFailureInfo{Type: "*errors.errorString"}}}}}
	actErr := temporal.GetDefaultFailureConverter().FailureToError(f)
	var ae *temporal.ActivityError
	if !errors.As(actErr, &ae) {
		t.Fatalf("converted failure is %T, want an activity error", actErr)
	}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"activity chain under our prefix", fmt.Errorf("localize acme/x: %w", actErr), "localize acme/x: not indexed (run locus index first)"},
		{"other prefix kept", fmt.Errorf("fleet f1: %w", actErr), "fleet f1: localize acme/x: not indexed (run locus index first)"},
		{"activity timeout", fmt.Errorf("fleet f1: %w", temporal.GetDefaultFailureConverter().FailureToError(&failurepb.Failure{
			Message: "activity error", FailureInfo: &failurepb.Failure_ActivityFailureInfo{ActivityFailureInfo: &failurepb.ActivityFailureInfo{}},
			Cause: &failurepb.Failure{Message: "activity StartToClose timeout", FailureInfo: &failurepb.Failure_TimeoutFailureInfo{
				TimeoutFailureInfo: &failurepb.TimeoutFailureInfo{TimeoutType: enumspb.TIMEOUT_TYPE_START_TO_CLOSE}}}})),
			"fleet f1: timed out (StartToClose)"},
		{"plain error untouched", errors.New("open store s3://b: denied"), "open store s3://b: denied"},
	} {
		if got := errorMessage(tc.err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"index", "status", "localize", "eval", "server", "worker", "bench"}
	for in, want := range map[string]string{"indx": "index", "INDEX": "index", "wroker": "worker", "serve": "server",
		"x": "", "statistics": "", "": ""} {
		if got := nearest(in, names); got != want {
			t.Errorf("nearest(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"windw", "window", 1}, {"flaw", "lawn", 2}} {
		if got := levenshtein(tc.a, tc.b); got != tc.d {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

func TestTripletsStatsArguments(t *testing.T) {
	if code, _, errOut := runCLI(t, "triplets", "stats"); code != 2 || !strings.Contains(errOut, "triplets stats needs one output directory") {
		t.Errorf("no directory: exit %d, %q", code, errOut)
	}
	dir := t.TempDir()
	if code, _, errOut := runCLI(t, "triplets", "stats", "--data-dir", filepath.Join(dir, "data"), dir); code != 1 || !strings.Contains(errOut, "is not a triplets output directory") {
		t.Errorf("not an output directory: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "triplets", "fit", "--data-dir", filepath.Join(dir, "data"), dir); code != 1 || !strings.Contains(errOut, "triplets fit: "+dir+" is not a triplets output directory") {
		t.Errorf("fit, not an output directory: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "rank", "train"); code != 2 || !strings.Contains(errOut, "rank train needs a triplets output directory") {
		t.Errorf("rank train, no directory: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "rank", "train", "--data-dir", filepath.Join(dir, "data"), dir); code != 1 || !strings.Contains(errOut, "rank train: "+dir+" is not a triplets output directory") {
		t.Errorf("rank train, not an output directory: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "rank", "train-files"); code != 2 || !strings.Contains(errOut, "rank train-files needs a triplets output directory") {
		t.Errorf("rank train-files, no directory: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "rank", "train-files", "--data-dir", filepath.Join(dir, "data"), "--out", filepath.Join(dir, "files.json"), dir); code != 1 || !strings.Contains(errOut, "rank train-files: "+dir+" is not a triplets output directory") {
		t.Errorf("rank train-files, not an output directory: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "localize", "--repo", "a/b", "--method", "learned", "--model", "fleet:a/b", "x"); code != 2 || !strings.Contains(errOut, "want fleet:NAME or fleet:NAME/loo") {
		t.Errorf("--model fleet: with a bad name: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "localize", "--repo", "a/b", "--method", "hybrid", "--model", "m.json", "x"); code != 2 || !strings.Contains(errOut, "--model is for --method learned") {
		t.Errorf("--model without the learned method: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "localize", "--repo", "a/b", "--method", "learned", "--model", filepath.Join(dir, "absent.json"), "x"); code != 2 || !strings.Contains(errOut, "absent.json") {
		t.Errorf("a missing model: exit %d, %q", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"triplets", "fit"}, "triplets fit needs one output directory"},
		{[]string{"triplets", "fit", "--grid", "0,x", dir}, `--grid "0,x": want weights of 0 or more`},
		{[]string{"triplets", "fit", "--grid", "0,-1", dir}, `--grid "0,-1": want weights of 0 or more`},
		{[]string{"triplets", "fit", "--sample", "0", dir}, "--sample 0: want at least 1"},
	} {
		if code, _, errOut := runCLI(t, tc.args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// Schedule arguments are checked before any server is started: the data
// directory is never created.
// TestUsageListsEveryCommand: locus -h names every command, every schedule
// subcommand and triplets stats and fit, and not the benchmarks (locus-dev's);
// each schedule subcommand that takes a NAME says so in its own help.
func TestUsageListsEveryCommand(t *testing.T) {
	code, out, _ := runCLI(t, "-h")
	if code != 0 {
		t.Fatalf("locus -h: exit %d", code)
	}
	var want []string
	for _, c := range sortedKeys(commands) {
		want = append(want, "locus "+c)
	}
	want = append(want, "triplets stats", "triplets fit")
	want = append(want, scheduleCommands...)
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("locus -h does not mention %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "locus bench") {
		t.Errorf("locus -h lists bench, a locus-dev command:\n%s", out)
	}
	for _, sub := range scheduleCommands {
		if sub == "list" {
			continue
		}
		_, out, _ := runCLI(t, "schedule", sub, "-h")
		if !strings.Contains(out, "usage: locus schedule "+sub+" NAME") {
			t.Errorf("schedule %s -h does not name NAME:\n%s", sub, out)
		}
	}
}

func TestScheduleArguments(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"schedule"}, "schedule needs a subcommand"},
		{[]string{"schedule", "frob"}, `unknown schedule subcommand "frob"`},
		{[]string{"schedule", "trigerr", "n"}, `unknown schedule subcommand "trigerr"; did you mean trigger?`},
		{[]string{"schedule", "create"}, "schedule create needs a NAME"},
		{[]string{"schedule", "create", "--every", "1h"}, "schedule create needs a NAME"},
		{[]string{"schedule", "create", "bad name", "--data-dir", data, "--every", "1h", "."}, `schedule name "bad name"`},
		{[]string{"schedule", "create", "n", "--data-dir", data, "."}, "give --every D (e.g. 1h) or --cron EXPR"},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--every", "1h", "--cron", "0 * * * *", "."}, "give --every or --cron, not both"},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--every", "-1h", "."}, "--every -1h0m0s: want a positive interval of at least 1s"},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--every", "10ms", "."}, "--every 10ms: want at least 1s"},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--cron", "99 * * * *", "."}, `--cron "99 * * * *": Minute is not in range [0-59]`},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--cron", "0 3 * *", "."}, `--cron "0 3 * *": CronString does not have 5-7 fields`},
		// Flags may come before the NAME.
		{[]string{"schedule", "create", "--data-dir", data, "--every", "-1h", "n", "."}, "--every -1h0m0s: want a positive interval"},
		{[]string{"schedule", "backfill", "--data-dir", data, "--json", "n"}, "schedule backfill needs --start"},
		{[]string{"schedule", "trigger", "--temporal", "127.0.0.1:7233"}, "schedule trigger needs a NAME"},
		{[]string{"schedule", "trigger", "--temporl", "127.0.0.1:7233", "n"}, "did you mean --temporal?"},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--every", "1h"}, "no repositories given"},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--every", "1h", "--repos-file", "f", "."}, "give --repos-file or repositories, not both"},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--every", "1h", "--window", "0", "."}, "--window 0: want 1 to 1000"},
		{[]string{"schedule", "create", "n", "--data-dir", data, "--every", "1h", "--host-wait", "0s", "."}, "--host-wait 0s: want a positive duration"},
		{[]string{"schedule", "pause"}, "schedule pause needs a NAME"},
		{[]string{"schedule", "describe"}, "schedule describe needs a NAME"},
		{[]string{"schedule", "backfill"}, "schedule backfill needs a NAME"},
		{[]string{"schedule", "backfill", "n", "--data-dir", data}, "schedule backfill needs --start"},
		{[]string{"schedule", "backfill", "n", "--data-dir", data, "--start", "yesterday"}, `--start "yesterday": want an RFC 3339 time`},
		{[]string{"schedule", "backfill", "n", "--data-dir", data, "--start", "2026-11-20T00:00:00Z", "--end", "2026-11-19T00:00:00Z"}, "--end 2026-11-19T00:00:00Z is not after --start 2026-11-20T00:00:00Z"},
		{[]string{"schedule", "backfill", "n", "--data-dir", data, "--start", "2026-11-20T00:00:00Z", "--overlap", "all"}, `--overlap "all": want skip, buffer-one`},
	} {
		code, out, errOut := runCLI(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "locus:") != 1 || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one message naming %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, err := os.Stat(data); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("work started before the arguments were checked: %s exists", data)
	}
	// A repos file with a bad line is reported at create, naming the line.
	f := filepath.Join(t.TempDir(), "fleet.txt")
	if err := os.WriteFile(f, []byte("# fleet\n../../etc=/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "schedule", "create", "n", "--data-dir", data, "--every", "1h", "--repos-file", f); code != 1 || !strings.Contains(errOut, f+":2:") {
		t.Errorf("bad repos file: exit %d, %q", code, errOut)
	}
}

// Flags after positional arguments apply; "--" and words that name no flag
// after a positional argument stay positional.
func TestFlagsAfterArguments(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"repo", "--data-dir", "D"}, []string{"--data-dir", "D", "--", "repo"}},
		{[]string{"a", "--json", "b"}, []string{"--json", "--", "a", "b"}},
		{[]string{"a", "--window=3", "b"}, []string{"--window=3", "--", "a", "b"}},
		{[]string{"--window", "3", "a"}, []string{"--window", "3", "--", "a"}},
		{[]string{"crash", "with", "-v", "flag"}, []string{"--", "crash", "with", "-v", "flag"}},
		{[]string{"--bogus", "a"}, []string{"--bogus", "--", "a"}},
		{[]string{"a", "--", "--json"}, []string{"--", "a", "--json"}},
		{[]string{"-", "--json"}, []string{"--json", "--", "-"}},
		{[]string{"--json"}, []string{"--json"}},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.String("data-dir", "", "")
		fs.Bool("json", false, "")
		fs.Int("window", 1, "")
		if got := flagsFirst(fs, tc.args); !slices.Equal(got, tc.want) {
			t.Errorf("flagsFirst(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
	// Through a command: the data directory given after the repository is
	// the one used (before, "--data-dir" and its value were two repositories).
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "index", "nohost:1/x", "--data-dir", dir, "--window", "0")
	if code != 2 || !strings.Contains(errOut, "--window 0: want 1 to 1000") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
