package triplets

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/schema"
)

// IssueTexts are issue and pull-request texts by repository and number
// ("owner/name#12", lower case), for queries of commits that reference them.
type IssueTexts map[string]string

func issueKey(repo string, n int) string { return strings.ToLower(repo) + "#" + strconv.Itoa(n) }

// LoadIssues reads issues in the backlog input formats (JSON Lines, CSV, a
// GitHub issues export; defaultRepo for records that name no repository):
// each whose id is a number is kept under its repository and number. An
// unreadable file is an error naming it; records that cannot be read are
// counted in skipped, as the backlog reports them.
func LoadIssues(path, defaultRepo string) (texts IssueTexts, skipped int, err error) {
	issues, perrs, err := backlog.ParseFile(path, backlog.ParseOptions{DefaultRepo: defaultRepo, RequireRepo: true})
	if err != nil {
		return nil, 0, fmt.Errorf("issues %s: %w", path, err)
	}
	texts = IssueTexts{}
	for _, is := range issues {
		n, err := strconv.Atoi(strings.TrimPrefix(is.ID, "#"))
		if err != nil || n <= 0 {
			skipped++
			continue
		}
		repo, err := issueRepo(is.Repo)
		if err != nil {
			skipped++
			continue
		}
		texts[issueKey(string(repo), n)] = is.Text
	}
	return texts, skipped + len(perrs), nil
}

// issueRepo is the repository an issue record names: an owner/name, or a
// forge URL's. It is never read as a path, so a directory of the working
// directory spelt like the name cannot stand in for it.
func issueRepo(s string) (schema.RepoName, error) {
	s = strings.TrimSpace(s)
	if n, err := schema.ParseRepoName(s); err == nil {
		return n, nil
	}
	if !schema.IsRemoteURL(s) {
		return "", fmt.Errorf("repository %q is not an owner/name or a URL", s)
	}
	if masked, ok := schema.MaskCredentials(s); ok {
		return "", fmt.Errorf("repository %s: credentials in a URL are not accepted", masked)
	}
	return schema.RepoNameFromURL(s)
}

// lookup is the text of the first reference in msg that texts holds (a
// reference without a repository is to repo), ok false when none.
func (t IssueTexts) lookup(repo, msg string) (string, bool) {
	if len(t) == 0 {
		return "", false
	}
	for _, r := range IssueRefs(msg) {
		rr := r.Repo
		if rr == "" {
			rr = repo
		}
		if text, ok := t[issueKey(rr, r.Number)]; ok && strings.TrimSpace(text) != "" {
			return strings.TrimSpace(text), true
		}
	}
	return "", false
}
