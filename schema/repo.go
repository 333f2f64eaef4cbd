package schema

import (
	"fmt"
	"strings"
	"time"
)

// RepoName is the normalised "owner/name" of a repository as used in blob keys,
// workflow ids and Parquet rows. It never contains "..", a leading "/", a backslash,
// or characters outside [A-Za-z0-9._-] in either part.
type RepoName string

// ParseRepoName validates s ("owner/name", or just "name") and returns it normalised
// (lower-case, ".git" suffix removed). Anything that could escape a directory or a
// blob prefix is rejected with an error naming the input.
func ParseRepoName(s string) (RepoName, error) {
	orig := s
	s = strings.TrimSuffix(strings.TrimSpace(s), ".git")
	if s == "" {
		return "", fmt.Errorf("repository name %q: empty", orig)
	}
	parts := strings.Split(s, "/")
	if len(parts) > 2 {
		return "", fmt.Errorf("repository name %q: want owner/name", orig)
	}
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.HasPrefix(p, ".") {
			return "", fmt.Errorf("repository name %q: part %q is not allowed", orig, p)
		}
		if len(p) > 100 {
			return "", fmt.Errorf("repository name %q: part longer than 100 characters", orig)
		}
		for _, r := range p {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
			if !ok {
				return "", fmt.Errorf("repository name %q: character %q is not allowed", orig, r)
			}
		}
	}
	return RepoName(strings.ToLower(strings.Join(parts, "/"))), nil
}

// String returns the name.
func (r RepoName) String() string { return string(r) }

// LastRun is how the last fleet run that took a repository went: the fleet's
// workflow id (a schedule's run names the schedule), when its result was
// stored, and its error when it failed. The manifest keeps what the last
// successful one indexed.
type LastRun struct {
	Fleet string    `json:"fleet"`
	At    time.Time `json:"at"`
	OK    bool      `json:"ok"`
	Error string    `json:"error,omitempty"`
	Head  string    `json:"head,omitempty"`
}

// SafeKeySegment maps an arbitrary string (a workflow id) onto one blob key segment.
func SafeKeySegment(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := b.String()
	if out == "" || out == "." || out == ".." {
		out = "_" + out
	}
	return out
}

// FileName is r as one file name: owner+name.
func (r RepoName) FileName() string { return strings.ReplaceAll(string(r), "/", "+") }
