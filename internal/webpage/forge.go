package webpage

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
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

var (
	commitID = regexp.MustCompile(`^[0-9a-f]{7,64}$`)
	// scpURL is git's user@host:path form.
	scpURL = regexp.MustCompile(`^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+):(.+)$`)
)

// CodeLink is the address of path (repository-relative), at line, of the
// repository cloned from repoURL at commit, on its forge (GitHub, GitLab,
// Bitbucket); "" for any other host, a URL that is not one of a forge's
// repositories, or a commit that is not a hexadecimal id. Credentials in
// repoURL are left out.
func CodeLink(repoURL, commit, path string, line int) string {
	if !commitID.MatchString(commit) || path == "" {
		return ""
	}
	host, repoPath := "", ""
	if m := scpURL.FindStringSubmatch(repoURL); m != nil && !strings.Contains(repoURL, "://") {
		host, repoPath = m[1], m[2]
	} else {
		u, err := url.Parse(repoURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "ssh" && u.Scheme != "git") {
			return ""
		}
		host, repoPath = u.Hostname(), u.Path
	}
	link, ok := forges[strings.ToLower(strings.TrimPrefix(host, "www."))]
	if !ok {
		return ""
	}
	repoPath = strings.TrimSuffix(strings.Trim(repoPath, "/"), ".git")
	parts := strings.Split(repoPath, "/")
	if len(parts) < 2 {
		return ""
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || p == "-" {
			return ""
		}
	}
	base := "https://" + strings.ToLower(strings.TrimPrefix(host, "www.")) + "/" + escapePath(repoPath)
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
