package triplets

import (
	"reflect"
	"testing"
)

func TestCleanMessage(t *testing.T) {
	for _, tc := range []struct {
		name, msg, want string
	}{
		{"subject only", "Fix crash when the cache key is missing", "Fix crash when the cache key is missing"},
		{"PR number in the subject", "Handle empty config files (#1234)", "Handle empty config files"},
		{"trailers and sign-offs",
			"Add --strict flag\n\nThe flag makes warnings errors.\n\nSigned-off-by: A Dev <a@example.com>\nCo-authored-by: B <b@example.com>\nReviewed-on: https://review.example.com/c/1\nChange-Id: I0123abc\n",
			"Add --strict flag\n\nThe flag makes warnings errors."},
		{"closing keywords and URLs",
			"Parse dates in UTC\n\nFixes #77, closes owner/repo#8. See https://github.com/owner/repo/issues/9 for details.",
			"Parse dates in UTC\n\nfor details."},
		{"the words leading to a reference go with it", "Adjust the stacklevel of config warnings\n\nRelated to #123. See also https://github.com/o/r/pull/5",
			"Adjust the stacklevel of config warnings"},
		{"reference-only trailers go, speaking ones stay",
			"Guard the loop\n\nBug: 12345\nFixes: #9\nFix: off-by-one in the window",
			"Guard the loop\n\nFix: off-by-one in the window"},
		{"gh- references and CI tags", "[skip ci] Update the docs for gh-12", "Update the docs for"},
		{"cherry-pick note", "Backport the parser fix\n\n(cherry picked from commit 0123456789abcdef)", "Backport the parser fix"},
		{"a subject that looks like a trailer stays", "Fixes: handle None in get()", "Fixes: handle None in get()"},
		{"CRLF and spaces", "Tidy   the\r\n\r\n\r\nbody   text  ", "Tidy the\n\nbody text"},
		{"nothing left", "#123", ""},
		{"converted from Subversion and Mercurial", "[svn r37305] Show function sources in the docs\n\n--HG--\nbranch : trunk\ngit-svn-id: https://svn.example.org/x@37305 abc",
			"Show function sources in the docs"},
		{"a hash inside code stays", "Use dict['#x'] for C# names", "Use dict['#x'] for C# names"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CleanMessage(tc.msg); got != tc.want {
				t.Errorf("CleanMessage(%q)\n got %q\nwant %q", tc.msg, got, tc.want)
			}
		})
	}
}

func TestIssueRefs(t *testing.T) {
	got := IssueRefs("Fix the parser (#12)\n\nFixes gh-7 and other/lib#3; see https://github.com/acme/widgets/pull/45/files and #12 again.")
	want := []Ref{{Repo: "acme/widgets", Number: 45}, {Number: 12}, {Number: 7}, {Repo: "other/lib", Number: 3}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("IssueRefs = %+v, want %+v", got, want)
	}
	if got := IssueRefs("no references, just C# and #define"); got != nil {
		t.Errorf("IssueRefs = %+v, want none", got)
	}
}
