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

// Remote is a clone URL or local path split into the parts that name the
// repository: what ParseRepoSpec, name resolution and links to a forge read.
type Remote struct {
	// Scheme is the URL's scheme, lower-cased: "ssh" for the shorthand
	// git@host:path, "file" for a file:// URL, empty for a local path.
	Scheme string
	// Host is a remote URL's host (with its port), lower-cased, without
	// the user; empty for a local path or file:// URL.
	Host string
	// Path is the repository's path with surrounding slashes and a
	// trailing ".git" or "/.git" taken out: "owner/name" on a forge, the
	// absolute slash-separated directory for a local path.
	Path string
	// Local: a local path or a file:// URL, not a repository on another
	// host.
	Local bool
}

// ParseRemote splits raw, a URL with a scheme, an ssh shorthand such as
// git@host:owner/name, or a local path (made absolute).
func ParseRemote(raw string) (Remote, error) {
	var r Remote
	var p string
	switch {
	case strings.Contains(raw, "://"):
		u, err := url.Parse(raw)
		if err != nil {
			return r, fmt.Errorf("URL %q: %w", raw, err)
		}
		r.Scheme = strings.ToLower(u.Scheme)
		r.Local = r.Scheme == "file"
		if !r.Local {
			r.Host = strings.ToLower(u.Host)
		}
		p = u.Path
	case isSCP(raw):
		host, rest, _ := strings.Cut(raw, ":")
		if _, h, ok := strings.Cut(host, "@"); ok {
			host = h
		}
		r.Scheme, r.Host, p = "ssh", strings.ToLower(host), rest
	default:
		abs, err := filepath.Abs(raw)
		if err != nil {
			return r, err
		}
		r.Local, p = true, filepath.ToSlash(abs)
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), "/.git")
	r.Path = strings.Trim(strings.TrimSuffix(p, ".git"), "/")
	return r, nil
}

// IsRemoteURL reports whether raw names a repository on another host
// (scheme other than file://, or ssh shorthand such as git@host:owner/name),
// as opposed to a local path or file:// URL.
func IsRemoteURL(raw string) bool {
	if !strings.Contains(raw, "://") && !isSCP(raw) {
		return false // a local path: not made absolute to say so
	}
	r, err := ParseRemote(raw)
	return err == nil && !r.Local
}

// RepoNameFromURL derives a repository name from a clone URL or a local path.
// A remote URL's last two path elements (owner/name), a local path's last one.
func RepoNameFromURL(raw string) (RepoName, error) {
	r, err := ParseRemote(raw)
	if err != nil {
		return "", err
	}
	parts := strings.Split(r.Path, "/")
	name := parts[len(parts)-1]
	if !r.Local && len(parts) >= 2 {
		name = parts[len(parts)-2] + "/" + name
	}
	return ParseRepoName(name)
}

// urlCredentials finds the user information of an http(s) URL in a spec,
// and a user:password pair in any URL with a scheme (ssh://git@host is a
// user name, not a credential, and stays allowed).
var urlCredentials = regexp.MustCompile(`(?i)(?:https?://([^/@\s]+)@|[a-z][a-z0-9+.-]*://[^/@\s:]*:([^/@\s]+)@)`)

// credentialParam matches the names of query parameters that carry
// credentials: tokens, keys, secrets, passwords, signatures and sessions
// (an S3 presigned URL's X-Amz-Signature, X-Amz-Credential and
// X-Amz-Security-Token among them).
var credentialParam = regexp.MustCompile(`(?i)token|key|secret|passw|pwd|signature|^sig$|credential|auth|session`)

// MaskCredentials reports whether spec holds credentials in a URL (user
// information of an http(s) URL, a password in any URL, or a query
// parameter named like a token, key, secret, password or signature: it
// would then be stored in manifests, run history and clone configuration,
// and printed in logs), and returns spec with them replaced by *** (and any
// #ref dropped) for an error message.
func MaskCredentials(spec string) (string, bool) {
	masked, found := RedactURL(spec)
	if !found {
		return spec, false
	}
	masked, _, _ = strings.Cut(masked, "#")
	return masked, true
}

// RedactURL is u with every credential MaskCredentials finds replaced by
// ***, and whether there was one; what follows '#' is kept.
func RedactURL(u string) (string, bool) {
	found := false
	if loc := urlCredentials.FindStringSubmatchIndex(u); loc != nil {
		start, end := loc[2], loc[3]
		if start < 0 {
			start, end = loc[4], loc[5]
		}
		u, found = u[:start]+"***"+u[end:], true
	}
	scheme := strings.Index(u, "://")
	q := strings.Index(u, "?")
	if scheme < 0 || q < scheme {
		return u, found
	}
	query, frag := u[q+1:], ""
	if h := strings.Index(query, "#"); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	params := strings.Split(query, "&")
	for i, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || v == "" {
			continue
		}
		if name, err := url.QueryUnescape(k); err == nil {
			k = name
		}
		if credentialParam.MatchString(k) {
			params[i], found = p[:strings.Index(p, "=")+1]+"***", true
		}
	}
	return u[:q+1] + strings.Join(params, "&") + frag, found
}

func isSCP(s string) bool {
	colon := strings.Index(s, ":")
	slash := strings.Index(s, "/")
	return colon > 1 && (slash < 0 || colon < slash)
}
