package webpage

import "testing"

func TestCodeLink(t *testing.T) {
	const sha = "182ce3dd15dfa3537391c3efaf9c3ff407d134d4"
	for _, tc := range []struct {
		name, url, commit, path string
		line                    int
		want                    string
	}{
		{"github https", "https://github.com/pallets/flask.git", sha, "src/flask/cli.py", 12,
			"https://github.com/pallets/flask/blob/" + sha + "/src/flask/cli.py#L12"},
		{"github scp", "git@github.com:pallets/flask.git", sha, "a.py", 3, "https://github.com/pallets/flask/blob/" + sha + "/a.py#L3"},
		{"github credentials left out", "https://user:tok@github.com/o/n", sha, "a.py", 1, "https://github.com/o/n/blob/" + sha + "/a.py#L1"},
		{"github no line", "https://github.com/o/n", sha, "a.py", 0, "https://github.com/o/n/blob/" + sha + "/a.py"},
		{"gitlab subgroup", "https://gitlab.com/g/sub/n", sha, "lib/x.go", 7, "https://gitlab.com/g/sub/n/-/blob/" + sha + "/lib/x.go#L7"},
		{"bitbucket", "https://bitbucket.org/o/n.git", sha, "x.c", 40, "https://bitbucket.org/o/n/src/" + sha + "/x.c#lines-40"},
		{"path escaped", "https://github.com/o/n", sha, "dir with space/a#b?.py", 2, "https://github.com/o/n/blob/" + sha + "/dir%20with%20space/a%23b%3F.py#L2"},
		{"other host", "https://git.example.org/o/n", sha, "a.py", 1, ""},
		{"local path", "/srv/git/n", sha, "a.py", 1, ""},
		{"file url", "file:///srv/github.com/o/n", sha, "a.py", 1, ""},
		{"javascript", "javascript://github.com/o/n", sha, "a.py", 1, ""},
		{"not a repository", "https://github.com/o", sha, "a.py", 1, ""},
		{"dot segment", "https://github.com/o/..", sha, "a.py", 1, ""},
		{"short commit", "https://github.com/o/n", "182ce3", "a.py", 1, ""},
		{"not hex", "https://github.com/o/n", "main", "a.py", 1, ""},
		{"no commit", "https://github.com/o/n", "", "a.py", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CodeLink(tc.url, tc.commit, tc.path, tc.line); got != tc.want {
				t.Errorf("CodeLink(%q, %q, %q, %d) = %q, want %q", tc.url, tc.commit, tc.path, tc.line, got, tc.want)
			}
		})
	}
}
