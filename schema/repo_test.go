package schema

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRepoName(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "redis/redis", want: "redis/redis"},
		{in: "FasterXML/jackson-core", want: "fasterxml/jackson-core"},
		{in: "psf/requests.git", want: "psf/requests"},
		{in: "locus", want: "locus"},
		{in: "a_b/c.d-e", want: "a_b/c.d-e"},
		{in: "", bad: true},
		{in: "../etc", bad: true},
		{in: "a/..", bad: true},
		{in: "/abs/path", bad: true},
		{in: "a//b", bad: true},
		{in: "a/b/c", bad: true},
		{in: ".hidden/x", bad: true},
		{in: `a\b`, bad: true},
		{in: "a b/c", bad: true},
		{in: "a/b\x00", bad: true},
		{in: "ünïcode/x", bad: true},
		{in: strings.Repeat("x", 101), bad: true},
	} {
		got, err := ParseRepoName(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseRepoName(%q) = %q, want an error", tc.in, got)
			} else if !strings.Contains(err.Error(), "repository name") {
				t.Errorf("ParseRepoName(%q) error %q does not say what is wrong", tc.in, err)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("ParseRepoName(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		// A valid name can never leave the directory it is joined to.
		if !filepath.IsLocal(filepath.FromSlash(string(got))) {
			t.Errorf("%q is not a local path", got)
		}
	}
}

func TestParseRepoSpec(t *testing.T) {
	for _, tc := range []struct {
		in             string
		name, url, ref string
		bad            bool
	}{
		{in: "https://github.com/redis/redis.git", name: "redis/redis", url: "https://github.com/redis/redis.git"},
		{in: "git@github.com:psf/requests.git#v2.31.0", name: "psf/requests", url: "git@github.com:psf/requests.git", ref: "v2.31.0"},
		{in: "ssh://git@host:2222/team/svc.git", name: "team/svc", url: "ssh://git@host:2222/team/svc.git"},
		{in: "redis/redis=/srv/mirror/redis+redis/repo#7.2", name: "redis/redis", url: "/srv/mirror/redis+redis/repo", ref: "7.2"},
		{in: "/srv/git/widgets.git", name: "widgets", url: "/srv/git/widgets.git"},
		{in: "/srv/git/widgets/.git", name: "widgets", url: "/srv/git/widgets/.git"},
		{in: "file:///srv/git/widgets", name: "widgets", url: "file:///srv/git/widgets"},
		{in: "../evil=/srv/x", bad: true},
		{in: "/srv/odd dir/x y", bad: true},
		{in: "x=", bad: true},
		{in: "https://example.com/a/b#", bad: true},
	} {
		got, err := ParseRepoSpec(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseRepoSpec(%q) = %+v, want an error", tc.in, got)
			} else if !strings.Contains(err.Error(), tc.in) {
				t.Errorf("ParseRepoSpec(%q): error %q does not name the input", tc.in, err)
			}
			continue
		}
		if err != nil || string(got.Name) != tc.name || got.URL != tc.url || got.Ref != tc.ref {
			t.Errorf("ParseRepoSpec(%q) = %+v, %v; want name %q url %q ref %q", tc.in, got, err, tc.name, tc.url, tc.ref)
		}
	}
}

func TestKeysStayUnderTheRepoPrefix(t *testing.T) {
	r := RepoName("redis/redis")
	for _, k := range []string{r.ManifestKey(), r.CommitsPartKey("a", "b"), r.FileIDsKey("c")} {
		if !strings.HasPrefix(k, "repos/redis/redis/") {
			t.Errorf("key %q outside the repository prefix", k)
		}
	}
	if got := SafeKeySegment("../../x y"); strings.Contains(got, "/") || got == ".." {
		t.Errorf("SafeKeySegment = %q", got)
	}
}

func TestSplitRepoSpecAndIsRemoteURL(t *testing.T) {
	for _, tc := range []struct {
		in             string
		name, url, ref string
		explicit       bool
		remote         bool
	}{
		{in: "/x/flask/repo", url: "/x/flask/repo"},
		{in: ".", url: "."},
		{in: "acme/w=.#v1", name: "acme/w", url: ".", ref: "v1", explicit: true},
		{in: "https://github.com/a/b", url: "https://github.com/a/b", remote: true},
		{in: "git@github.com:a/b.git", url: "git@github.com:a/b.git", remote: true},
		{in: "file:///srv/a", url: "file:///srv/a"},
		{in: "a/b=ssh://h/x/y", name: "a/b", url: "ssh://h/x/y", explicit: true, remote: true},
	} {
		got, explicit, err := SplitRepoSpec(tc.in)
		if err != nil || string(got.Name) != tc.name || got.URL != tc.url || got.Ref != tc.ref || explicit != tc.explicit {
			t.Errorf("SplitRepoSpec(%q) = %+v, %v, %v; want name %q url %q ref %q explicit %v", tc.in, got, explicit, err, tc.name, tc.url, tc.ref, tc.explicit)
		}
		if r := IsRemoteURL(got.URL); r != tc.remote {
			t.Errorf("IsRemoteURL(%q) = %v, want %v", got.URL, r, tc.remote)
		}
	}
}

func TestMaskCredentials(t *testing.T) {
	for _, tc := range []struct {
		in, masked string
		found      bool
	}{
		{"https://alice:s3cret@host/x.git", "https://***@host/x.git", true},
		{"http://token@host/x.git#main", "http://***@host/x.git", true},
		{"acme/x=https://u:p@host/x.git", "acme/x=https://***@host/x.git", true},
		{"ssh://git:hunter2@host/x.git", "ssh://git:***@host/x.git", true},
		{"ssh://git@host/x.git", "ssh://git@host/x.git", false},
		{"git@host:owner/x.git", "git@host:owner/x.git", false},
		{"https://host/x.git", "https://host/x.git", false},
		{"/srv/repos/a@b", "/srv/repos/a@b", false},
		{"https://host/x.git?token=tok-1", "https://host/x.git?token=***", true},
		{"acme/x=https://host/x.git?a=1&Private_Token=t2&b=2#main", "acme/x=https://host/x.git?a=1&Private_Token=***&b=2", true},
		{"https://host/x.git?X-Amz-Credential=AK%2F1&X-Amz-Signature=ab12", "https://host/x.git?X-Amz-Credential=***&X-Amz-Signature=***", true},
		{"https://host/x.git?api%5Fkey=k3", "https://host/x.git?api%5Fkey=***", true},
		{"https://u:p@host/x.git?secret=s", "https://***@host/x.git?secret=***", true},
		{"https://host/x.git?sig=abc", "https://host/x.git?sig=***", true},
		{"https://host/x.git?ref=main&depth=1", "https://host/x.git?ref=main&depth=1", false},
		{"https://host/x.git?token=", "https://host/x.git?token=", false},
		{"/srv/repos/what?token=x", "/srv/repos/what?token=x", false},
	} {
		masked, found := MaskCredentials(tc.in)
		if masked != tc.masked || found != tc.found {
			t.Errorf("MaskCredentials(%q) = %q, %v; want %q, %v", tc.in, masked, found, tc.masked, tc.found)
		}
	}
}

func TestParseRemote(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Remote
		name RepoName
	}{
		{"https://GitHub.com/a/b.git/", Remote{Scheme: "https", Host: "github.com", Path: "a/b"}, "a/b"},
		{"ssh://git@host:2222/grp/sub/x.git", Remote{Scheme: "ssh", Host: "host:2222", Path: "grp/sub/x"}, "sub/x"},
		{"git@Host:owner/x.git", Remote{Scheme: "ssh", Host: "host", Path: "owner/x"}, "owner/x"},
		{"https://host/x", Remote{Scheme: "https", Host: "host", Path: "x"}, "x"},
		{"file:///srv/a/.git", Remote{Scheme: "file", Path: "srv/a", Local: true}, "a"},
		{"/srv/repos/b.git", Remote{Path: "srv/repos/b", Local: true}, "b"},
	} {
		got, err := ParseRemote(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseRemote(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
		if n, err := RepoNameFromURL(tc.in); err != nil || n != tc.name {
			t.Errorf("RepoNameFromURL(%q) = %q, %v; want %q", tc.in, n, err, tc.name)
		}
	}
	if _, err := ParseRemote("https://host/%zz"); err == nil || !strings.Contains(err.Error(), "%zz") {
		t.Errorf("a malformed URL: %v", err)
	}
}
