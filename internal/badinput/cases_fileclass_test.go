package badinput

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// fileclassCases are repositories whose files' languages their extensions
// do not settle (internal/fileclass, linguist's rules through go-enry).
var fileclassCases = []badCase{
	{
		name:  "lang-shared-extension",
		input: "a repository mostly of Objective-C in `.m` files, an extension MATLAB, Mercury and others share, with one Python function",
		want:  "exit 0, indexed; the warning names objective-c as the unsupported main language (told from the files' content), and its bytes are recorded as objective-c",
		setup: func(s *sandbox) []string {
			r := s.repo("objc")
			r.Write(map[string]string{
				"lib.py":            "def helper(n):\n    return n * 2\n",
				"Classes/Greeter.m": "#import <Foundation/Foundation.h>\n\n@implementation Greeter\n" + strings.Repeat("- (void)greet { NSLog(@\"hi\"); }\n", 40) + "@end\n",
			})
			r.Commit("add a greeter")
			return []string{"index", r.Dir}
		},
		code:  0,
		names: []string{"graph: unsupported language objective-c"},
		check: func(s *sandbox, r result) {
			s.indexed("objc")
			if got := codeBytes(s, "objc"); got["objective-c"] == 0 || got["python"] == 0 || len(got) != 2 {
				s.t.Errorf("code bytes %v, want objective-c and python", got)
			}
		},
	},
	{
		name:  "lang-prose-language-extension",
		input: "a Python repository with long release notes named `VERSION-2.x`, an extension Logos, RPC and linker scripts use",
		want:  "exit 0, indexed, no language warning: prose whose content settles no language counts as none, not as the repository's main language",
		setup: func(s *sandbox) []string {
			r := s.repo("notes")
			r.Write(map[string]string{
				"lib.py":                    "def helper(n):\n    return n * 2\n",
				"release-notes/VERSION-2.x": strings.Repeat("#1234: fix the parser of numbers\n(reported by a user)\n\n", 100),
			})
			r.Commit("add release notes")
			return []string{"index", r.Dir}
		},
		code: 0,
		check: func(s *sandbox, r result) {
			s.indexed("notes")
			if strings.Contains(r.stderr+r.stdout, "unsupported language") {
				s.t.Errorf("release notes taken for the main language:\n%v", r)
			}
			if got := codeBytes(s, "notes"); fmt.Sprint(got) != "map[python:32]" {
				s.t.Errorf("code bytes %v, want python's 32 alone", got)
			}
		},
	},
}

// codeBytes are the bytes by language that repo's stored manifest records.
func codeBytes(s *sandbox, repo string) map[string]int64 {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join(s.store(), "repos", repo, "manifest.json"))
	if err != nil {
		s.t.Fatalf("manifest of %s: %v", repo, err)
	}
	var m struct {
		Graph struct {
			CodeBytes map[string]int64 `json:"code_bytes"`
		} `json:"graph"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		s.t.Fatalf("manifest of %s: %v", repo, err)
	}
	return m.Graph.CodeBytes
}
