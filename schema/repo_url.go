package schema

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
)

// ParseRepoSpec parses a command-line repository spec "[name=]url[#ref]".
// Without a name, one is derived from the URL: owner/name for remote URLs, the
// directory name for local paths. It reads nothing from disk; callers with a
// local path should use gitrepo.ResolveSpec, which prefers the origin remote.
func ParseRepoSpec(s string) (RepoSpec, error) {
	spec, explicit, err := SplitRepoSpec(s)
	if err != nil || explicit {
		return spec, err
	}
	n, err := RepoNameFromURL(spec.URL)
	if err != nil {
		return spec, fmt.Errorf("repository spec %q: %w (give a name: owner/name=%s)", s, err, spec.URL)
	}
	spec.Name = n
	return spec, nil
}

// SplitRepoSpec parses "[name=]url[#ref]" without deriving a name: Name is set
// only when the spec gives one, and explicit says so.
func SplitRepoSpec(s string) (spec RepoSpec, explicit bool, err error) {
	rest := strings.TrimSpace(s)
	if name, u, ok := strings.Cut(rest, "="); ok && !strings.Contains(name, ":") {
		n, err := ParseRepoName(name)
		if err != nil {
			return spec, false, fmt.Errorf("repository spec %q: %w", s, err)
		}
		spec.Name, rest, explicit = n, u, true
	}
	if u, ref, ok := strings.Cut(rest, "#"); ok {
		rest, spec.Ref = u, ref
		if ref == "" {
			return spec, false, fmt.Errorf("repository spec %q: empty ref after '#'", s)
		}
	}
	if rest == "" {
		return spec, false, fmt.Errorf("repository spec %q: no URL or path", s)
	}
	spec.URL = rest
	return spec, explicit, nil
}

// IsRemoteURL reports whether raw names a repository on another host
// (scheme other than file://, or ssh shorthand such as git@host:owner/name),
// as opposed to a local path or file:// URL.
func IsRemoteURL(raw string) bool {
	if strings.Contains(raw, "://") {
		u, err := url.Parse(raw)
		return err == nil && u.Scheme != "file"
	}
	return isSCP(raw)
}

// RepoNameFromURL derives a repository name from a clone URL or a local path.
func RepoNameFromURL(raw string) (RepoName, error) {
	var p string
	remote := true
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return "", fmt.Errorf("URL %q: %w", raw, err)
		}
		p = u.Path
		remote = u.Scheme != "file"
	case isSCP(raw):
		_, p, _ = strings.Cut(raw, ":")
	default:
		abs, err := filepath.Abs(raw)
		if err != nil {
			return "", err
		}
		p = filepath.ToSlash(abs)
		remote = false
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), "/.git")
	p = strings.TrimSuffix(p, ".git")
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var name string
	switch {
	case !remote || len(parts) < 2:
		name = parts[len(parts)-1]
	default:
		name = parts[len(parts)-2] + "/" + parts[len(parts)-1]
	}
	return ParseRepoName(name)
}

// urlCredentials finds the user information of an http(s) URL in a spec,
// and a user:password pair in any URL with a scheme (ssh://git@host is a
// user name, not a credential, and stays allowed).
var urlCredentials = regexp.MustCompile(`(?i)(?:https?://([^/@\s]+)@|[a-z][a-z0-9+.-]*://[^/@\s:]*:([^/@\s]+)@)`)

// MaskCredentials reports whether spec holds credentials in a URL (a
// password would then be stored in manifests, run history and clone
// configuration, and printed in logs), and returns spec with them replaced
// by *** (and any #ref dropped) for an error message.
func MaskCredentials(spec string) (string, bool) {
	loc := urlCredentials.FindStringSubmatchIndex(spec)
	if loc == nil {
		return spec, false
	}
	start, end := loc[2], loc[3]
	if start < 0 {
		start, end = loc[4], loc[5]
	}
	masked, _, _ := strings.Cut(spec[:start]+"***"+spec[end:], "#")
	return masked, true
}

func isSCP(s string) bool {
	colon := strings.Index(s, ":")
	slash := strings.Index(s, "/")
	return colon > 1 && (slash < 0 || colon < slash)
}
