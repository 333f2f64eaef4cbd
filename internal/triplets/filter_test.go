package triplets

import (
	"reflect"
	"testing"
)

func TestFilter(t *testing.T) {
	code := FileChange{Path: "pkg/cache.py", Diff: []byte("-    return self.store[key]\n+    return self.store.get(key)\n"),
		Functions: []string{"pkg/cache.py:Cache.get"}}
	test := FileChange{Path: "tests/test_cache.py", Diff: []byte("+    assert c.get('x') is None\n"), Functions: []string{"tests/test_cache.py:test_get"}}
	vendored := FileChange{Path: "vendor/lib/util.go", Diff: []byte("-a := 1\n+a := 2\n"), Functions: []string{"vendor/lib/util.go:F"}}
	generated := FileChange{Path: "api/service.pb.go", Diff: []byte("-x\n+y\n"), Functions: []string{"api/service.pb.go:Init"}}
	reformat := FileChange{Path: "pkg/cache.py", Diff: []byte("-def get(self,key):\n+def get(self, key):\n-  return 1\n+    return 1\n"), Functions: []string{"pkg/cache.py:Cache.get"}}
	many := FileChange{Path: "pkg/big.py", Diff: []byte("-a\n+b\n")}
	for i := range 11 {
		many.Functions = append(many.Functions, "pkg/big.py:f"+string(rune('a'+i)))
	}
	for _, tc := range []struct {
		name  string
		c     Change
		skip  Skip
		query string
		pos   []string
	}{
		{"kept, tests left out of the positives", Change{Message: "Return None for a missing key (#12)\n\nSigned-off-by: A <a@x>", Files: []FileChange{code, test}},
			"", "Return None for a missing key", []string{"pkg/cache.py:Cache.get"}},
		{"merge", Change{Message: "Merge branch 'x'", IsMerge: true, Files: []FileChange{code}}, SkipMerge, "", nil},
		{"revert", Change{Message: "Revert \"Return None\"\n\nThis reverts commit abc.", Files: []FileChange{code}}, SkipRevert, "", nil},
		{"bot", Change{Message: "Bump lib from 1 to 2", AuthorName: "dependabot[bot]", Files: []FileChange{code}}, SkipBot, "", nil},
		{"bot address", Change{Message: "Update", AuthorEmail: "ci-bot@example.com", Files: []FileChange{code}}, SkipBot, "", nil},
		{"empty query", Change{Message: "#42\n\nSigned-off-by: A <a@x>", Files: []FileChange{code}}, SkipEmptyQuery, "", nil},
		{"formatting only", Change{Message: "Format the cache module", Files: []FileChange{reformat}}, SkipFormatting, "", nil},
		{"only tests", Change{Message: "Test missing keys", Files: []FileChange{test}}, SkipOnlyTests, "", nil},
		{"only vendored and generated", Change{Message: "Update vendored code", Files: []FileChange{vendored, generated}}, SkipOnlyVendored, "", nil},
		{"no function", Change{Message: "Update the README", Files: []FileChange{{Path: "README.md", Diff: []byte("-a\n+b\n")}}}, SkipNoFunctions, "", nil},
		{"binary only", Change{Message: "New logo", Files: []FileChange{{Path: "logo.png", IsBinary: true, Functions: []string{"x"}}}}, SkipNoFunctions, "", nil},
		{"too many", Change{Message: "Rename everything", Files: []FileChange{many}}, SkipTooMany, "", nil},
		// History names no functions in a file of a language without a
		// code graph: nothing to retrieve, counted, never an empty record.
		{"language without a graph", Change{Message: "Fix the Haskell parser", Files: []FileChange{{Path: "src/Parser.hs", Diff: []byte("-a\n+b\n")}}}, SkipNoFunctions, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, pos, skip := Filter{}.Check(tc.c)
			if skip != tc.skip || q != tc.query || !reflect.DeepEqual(pos, tc.pos) {
				t.Errorf("Check = %q %v %q, want %q %v %q", q, pos, skip, tc.query, tc.pos, tc.skip)
			}
		})
	}
	if _, pos, skip := (Filter{MaxFunctions: 20}).Check(Change{Message: "Rename everything", Files: []FileChange{many}}); skip != "" || len(pos) != 11 {
		t.Errorf("MaxFunctions 20: %v %q", pos, skip)
	}
}

func TestIsVendored(t *testing.T) {
	for p, want := range map[string]bool{
		"vendor/github.com/x/y.go": true, "src/third_party/zlib/inflate.c": true, "web/node_modules/a/index.js": true,
		"api/v1/service.pb.go": true, "proto/msg_pb2.py": true, "static/app.min.js": true, "pkg/zz_generated.deepcopy.go": true,
		"src/vendored.py": false, "pkg/cache.py": false, "docs/distance.md": false,
		// linguist's rules (fileclass): CI scripts, test fixtures, bundled
		// themes and pip's _vendor are not the project's code; a package
		// named cache or env is.
		".github/scripts/junit.py": true, "testdata/grpc_testing_not_regenerated/dynamic.go": true,
		"docs/_themes/flask_theme_support.py": true, "src/pip/_vendor/rich/console.py": true,
		"internal/cache/timeoutCache.go": false, "lib/env/data.js": false,
		// Python packages bundled inside a package (requests before 2.16).
		"requests/packages/urllib3/connectionpool.py": true, "setuptools/extern/__init__.py": true,
		"packages/core/src/index.py": false, "packages/app/index.js": false, "requests/sessions.py": false, "setup.py": false, "packages/x.py": false,
	} {
		if got := IsVendored(p); got != want {
			t.Errorf("IsVendored(%q) = %v, want %v", p, got, want)
		}
	}
}
