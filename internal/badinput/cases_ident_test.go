package badinput

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// identCases: which stored repository an argument means, credentials in
// URLs, and what a repository's own strings may do to a terminal.
var identCases = []badCase{
	{
		name: "ident-lookalike-path",
		input: "two repositories at `X/a/repo` (indexed as `repo`) and `X/b/repo` (indexed as `b/repo`); `localize`, `status` and `backlog` " +
			"given the path `X/b/repo` (and `localize --repo .` inside it); `localize --repo b/repo` from a folder whose `./b/repo` is a clone of the other",
		want: "each path answers from `b/repo`, the repository indexed from it, never from `repo`; the name spelt like a directory that is another " +
			"stored repository is refused (exit 1) naming both",
		setup: func(s *sandbox) []string {
			a := s.repo("x/a/repo")
			a.Write(map[string]string{"lib.py": "def alpha_total(values):\n    return sum(values)\n"})
			a.Commit("add alpha_total")
			b := s.repo("x/b/repo")
			b.Write(map[string]string{"parse.py": "def beta_tokens(text):\n    return text.split()\n"})
			b.Commit("add beta_tokens")
			for _, spec := range []string{a.Dir, "b/repo=" + b.Dir} {
				if r := s.locus("index", spec); r.code != 0 {
					s.t.Fatalf("index %s: %v", spec, r)
				}
			}
			s.indexed("repo")
			s.indexed("b/repo")
			s.vars["A"], s.vars["B"] = a.Dir, b.Dir
			a.Git("clone", "-q", a.Dir, filepath.Join(s.dir, "elsewhere", "b", "repo"))
			writeFile(s, "issues.jsonl", `{"id": "t1", "problem_statement": "beta tokens splits the text wrong"}`+"\n")
			return []string{"localize", "--json", "--repo", b.Dir, "beta tokens splits the text wrong"}
		},
		check: func(s *sandbox, r result) {
			localizedFrom(s, r, "b/repo", "parse.py:beta_tokens")
			dot := runLocus(s.t, s.data, s.vars["B"], s.env, "localize", "--json", "--repo", ".", "beta tokens splits the text wrong")
			localizedFrom(s, dot, "b/repo", "parse.py:beta_tokens")
			if ms := s.status(s.vars["B"]); len(ms) != 1 || ms[0].Repo != "b/repo" {
				s.t.Errorf("locus status %s shows %+v, want b/repo alone", s.vars["B"], ms)
			}
			bl := s.locus("backlog", "--json", "--repo", s.vars["B"], "--out", filepath.Join(s.dir, "out"), filepath.Join(s.dir, "issues.jsonl"))
			if bl.code != 0 {
				s.t.Fatalf("backlog --repo %s: %v", s.vars["B"], bl)
			}
			if l := readBacklogOut(s, bl).results["t1"]; len(l.Functions) == 0 || l.Functions[0].ID != "parse.py:beta_tokens" {
				s.t.Errorf("backlog --repo %s ranked %+v, want parse.py:beta_tokens of b/repo first", s.vars["B"], l)
			}
			amb := runLocus(s.t, s.data, filepath.Join(s.dir, "elsewhere"), s.env, "localize", "--repo", "b/repo", "beta tokens")
			if amb.code != 1 || !strings.Contains(amb.stderr, "b/repo ("+s.vars["B"]+")") || !strings.Contains(amb.stderr, "repo ("+s.vars["A"]+")") {
				s.t.Errorf("localize --repo b/repo next to a clone of repo: want exit 1 naming both stored repositories\n%v", amb)
			}
		},
	},
	{
		name:  "ident-token-in-query",
		input: "an http URL whose query carries a token (`http://host/x.git?token=SECRET`) to a real git server",
		want:  "exit 1 before any work: the URL is refused with the token masked (`?token=***`); the token appears nowhere in the output or the data dir",
		setup: func(s *sandbox) []string {
			const secret = "qtok-R4w9-secret"
			r := s.simpleRepo("src")
			r.Git("clone", "-q", "--bare", r.Dir, filepath.Join(s.dir, "served", "x.git"))
			base := serveGit(s.t, filepath.Join(s.dir, "served"), "", "")
			s.vars["SECRET"] = secret
			s.vars["MASKED"] = base + "/x.git?token=***"
			return []string{"index", "creds/q=" + base + "/x.git?token=" + secret}
		},
		code:  1,
		names: []string{"{{MASKED}}", "credentials"},
		check: func(s *sandbox, r result) {
			s.notIndexed("creds/q")
			noSecret(s, r)
			// The same URL given to localize is refused alike.
			l := s.locus("localize", "--repo", strings.Replace(s.vars["MASKED"], "***", s.vars["SECRET"], 1), "bug")
			if l.code != 1 || !strings.Contains(l.stderr, s.vars["MASKED"]) {
				s.t.Errorf("localize --repo URL?token=…: want exit 1 with the token masked\n%v", l)
			}
			noSecret(s, l)
		},
	},
	{
		name:  "ident-control-characters-in-file-names",
		input: "a committed Python file named with terminal escapes (`ESC[2J ESC]0;title BEL`) and another with a newline in its name",
		want: "`localize` prints both ids escaped (`\\x1b[2J…\\a`, `\\n`): no control byte reaches the terminal and every row stays one line; " +
			"`--json` keeps the ids exact",
		setup: func(s *sandbox) []string {
			r := s.repo("esc")
			r.Write(map[string]string{
				"\x1b[2J\x1b]0;owned\x07.py": "def clear_screen_total(values):\n    return sum(values)\n",
				"two\nlines.py":              "def newline_total(values):\n    return sum(values) + 1\n",
			})
			r.Commit("add two totals")
			if res := s.locus("index", "esc/r="+r.Dir); res.code != 0 {
				s.t.Fatalf("index: %v", res)
			}
			return []string{"localize", "--repo", "esc/r", "--k", "5", "total of values"}
		},
		check: func(s *sandbox, r result) {
			for _, b := range []string{"\x1b", "\x07"} {
				if strings.Contains(r.stdout, b) || strings.Contains(r.stderr, b) {
					s.t.Errorf("a control byte %q reaches the terminal:\n%q", b, r.stdout)
				}
			}
			for _, want := range []string{`\x1b[2J\x1b]0;owned\a.py:clear_screen_total`, `two\nlines.py:newline_total`} {
				if !strings.Contains(r.stdout, want) {
					s.t.Errorf("localize does not print %s escaped:\n%s", want, r.stdout)
				}
			}
			for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				if strings.HasPrefix(l, "lines.py") {
					s.t.Errorf("a file name's newline broke the table:\n%s", r.stdout)
				}
			}
			j := s.locus("localize", "--json", "--repo", "esc/r", "--k", "5", "total of values")
			var res struct {
				Items []struct {
					ID string `json:"id"`
				} `json:"items"`
			}
			if err := json.Unmarshal([]byte(j.stdout), &res); err != nil {
				s.t.Fatalf("localize --json: %v\n%v", err, j)
			}
			ids := map[string]bool{}
			for _, it := range res.Items {
				ids[it.ID] = true
			}
			for _, want := range []string{"\x1b[2J\x1b]0;owned\x07.py:clear_screen_total", "two\nlines.py:newline_total"} {
				if !ids[want] {
					s.t.Errorf("localize --json lacks the exact id %q: %v", want, ids)
				}
			}
		},
	},
	{
		name:  "ident-not-indexed-lists-indexed",
		input: "`locus localize --repo psf/requests` when only other repositories are indexed",
		want:  "exit 1: the name is said once (`psf/requests: not indexed`) and the indexed repositories are listed",
		setup: func(s *sandbox) []string {
			return []string{"localize", "--repo", "psf/requests", "session leaks"}
		},
		code:  1,
		names: []string{"psf/requests: not indexed", "indexed: " + baseRepo},
		check: func(s *sandbox, r result) {
			if strings.Count(r.stderr, "psf/requests") != 1 {
				s.t.Errorf("the name is not said exactly once:\n%s", r.stderr)
			}
		},
	},
	{
		name:  "ident-output-paths-and-modes",
		input: "`locus index` and `locus backlog --out DIR` run from a directory other than the data dir",
		want:  "the printed summary and results paths are absolute paths in the store that exist; results.jsonl and summary.md are mode 0644",
		setup: func(s *sandbox) []string {
			writeFile(s, "issues.jsonl", goodIssue+"\n")
			return []string{"backlog", "--out", filepath.Join(s.dir, "out"), filepath.Join(s.dir, "issues.jsonl")}
		},
		check: func(s *sandbox, r result) {
			if r.code != 0 {
				s.t.Fatalf("backlog: %v", r)
			}
			printedPath(s, r.stdout, "results: ", true)
			for _, f := range []string{"results.jsonl", "summary.md"} {
				st, err := os.Stat(filepath.Join(s.dir, "out", f))
				if err != nil {
					s.t.Fatal(err)
				}
				if st.Mode().Perm() != 0o644 {
					s.t.Errorf("%s has mode %v, want 0644", f, st.Mode().Perm())
				}
			}
			idx := s.locus("index", "paths/r="+s.simpleRepo("r").Dir)
			if idx.code != 0 {
				s.t.Fatalf("index: %v", idx)
			}
			printedPath(s, idx.stdout, "summary: ", false)
		},
	},
}

// localizedFrom fails unless r is a successful `localize --json` answered
// from repo with top first.
func localizedFrom(s *sandbox, r result, repo, top string) {
	s.t.Helper()
	if r.code != 0 {
		s.t.Fatalf("localize: %v", r)
	}
	var res struct {
		Repo  string `json:"repo"`
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		s.t.Fatalf("localize --json: %v\n%v", err, r)
	}
	if res.Repo != repo || len(res.Items) == 0 || res.Items[0].ID != top {
		s.t.Errorf("localize %v answered from %s with %+v, want %s with %s first", r.args, res.Repo, res.Items, repo, top)
	}
}

// printedPath fails unless out has a line "<label><path>" whose path is
// absolute, inside the store, and (glob when it holds a pattern) exists.
func printedPath(s *sandbox, out, label string, glob bool) {
	s.t.Helper()
	for _, l := range strings.Split(out, "\n") {
		p, ok := strings.CutPrefix(l, label)
		if !ok {
			if _, after, found := strings.Cut(l, "; "+label); found {
				p, ok = after, true
			}
		}
		if !ok {
			continue
		}
		if !filepath.IsAbs(p) || !strings.HasPrefix(p, s.store()+string(filepath.Separator)) {
			s.t.Errorf("printed %s%s: want an absolute path in the store %s", label, p, s.store())
			return
		}
		if glob {
			if m, _ := filepath.Glob(p); len(m) == 0 {
				s.t.Errorf("printed %s%s matches no file", label, p)
			}
		} else if _, err := os.Stat(p); err != nil {
			s.t.Errorf("printed %s%s: %v", label, p, err)
		}
		return
	}
	s.t.Errorf("no %q line in:\n%s", label, out)
}
