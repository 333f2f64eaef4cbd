package webpage

import (
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/schema"
)

// forges are the hosts whose code pages CodeLink knows, and how each links
// to a line of a file at a commit.
var forges = map[string]func(base, commit, path string, line int) string{
	"github.com": func(base, commit, path string, line int) string {
		return base + "/blob/" + commit + "/" + path + lineAnchor("#L", line)
	},
	"gitlab.com": func(base, commit, path string, line int) string {
		return base + "/-/blob/" + commit + "/" + path + lineAnchor("#L", line)
	},
	"bitbucket.org": func(base, commit, path string, line int) string {
		return base + "/src/" + commit + "/" + path + lineAnchor("#lines-", line)
	},
}

func lineAnchor(prefix string, line int) string {
	if line <= 0 {
		return ""
	}
	return prefix + strconv.Itoa(line)
}

var commitID = regexp.MustCompile(`^[0-9a-f]{7,64}$`)

// CodeLink is the address of path (repository-relative), at line, of the
// repository cloned from repoURL at commit, on its forge (GitHub, GitLab,
// Bitbucket); "" for any other host, a URL that is not one of a forge's
// repositories, or a commit that is not a hexadecimal id. Credentials in
// repoURL are left out.
func CodeLink(repoURL, commit, path string, line int) string {
	if !commitID.MatchString(commit) || path == "" {
		return ""
	}
	r, err := schema.ParseRemote(repoURL)
	if err != nil || (r.Scheme != "https" && r.Scheme != "http" && r.Scheme != "ssh" && r.Scheme != "git") {
		return ""
	}
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h // ssh://git@github.com:22/…
	}
	host = strings.TrimPrefix(host, "www.")
	link, ok := forges[host]
	if !ok {
		return ""
	}
	repoPath := r.Path
	parts := strings.Split(repoPath, "/")
	if len(parts) < 2 {
		return ""
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || p == "-" {
			return ""
		}
	}
	base := "https://" + host + "/" + escapePath(repoPath)
	return link(base, commit, escapePath(path), line)
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}
