// Package triplets mines training data for code retrievers and rerankers
// from a fleet's history: for a change, an issue-style query (its cleaned
// commit message, or the text of the issue it references), the functions it
// edited as positives, and hard negatives from the same repository state.
//
// This file turns commit messages into queries.
package triplets

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// trailerKeys are git trailers and sign-offs that say who, not what.
var trailerKeys = []string{
	"signed-off-by", "co-authored-by", "co-developed-by", "reviewed-by", "acked-by", "tested-by",
	"reported-by", "suggested-by", "reviewed-on", "change-id", "cc", "approved-by", "helped-by",
	"pr-url", "pull-request", "backport-of", "cherry-picked-from", "ghstack-source-id", "differential revision",
}

// refKeys are trailers that point at an issue: dropped when they hold
// nothing but references ("Bug: 1234", "Fixes: #12"), kept when they say
// more ("Fixes: crash on empty input").
var refKeys = []string{"fixes", "fix", "closes", "resolves", "refs", "ref", "see-also", "bug", "issue", "related"}

var (
	// "Fixes #12", "closes gh-7", "resolve owner/repo#3" (the keyword and the reference).
	closingRef = regexp.MustCompile(`(?i)\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|refs?|see)\s*:?\s+(?:[\w.-]+/[\w.-]+)?(?:#|gh-)\d+\b`)
	// "(#1234)", "[#12]", " #45", "gh-123", "owner/repo#6", "GH-9".
	bareRef = regexp.MustCompile(`(?i)[(\[]?\b(?:[\w.-]+/[\w.-]+)?(?:#|gh-)\d+\b[)\]]?|[(\[]#\d+[)\]]|(?:^|\s)#\d+\b`)
	// Issue and pull-request URLs of the common forges.
	refURL = regexp.MustCompile(`(?i)https?://\S+/(?:issues|pull|pulls|merge_requests|-/issues)/\d+\S*`)
	// CI markers and other tags that are not about the change.
	ciTag = regexp.MustCompile(`(?i)\[(?:skip ci|ci skip|no ci|skip actions|actions skip)\]`)
	// "cherry picked from commit <sha>" lines, and what converters from
	// Subversion and Mercurial leave ("git-svn-id: …", "--HG--", "branch : x").
	cherryPick = regexp.MustCompile(`(?i)^(?:\(?cherry[ -]picked from commit [0-9a-f]+\)?|git-svn-id: .*|--HG--|branch : \S+)$`)
	// A reference with the words that lead to it ("Related to #12", "See
	// also https://…/issues/4", "follow-up to #9"), removed together so
	// no dangling words remain.
	leadRef = regexp.MustCompile(`(?i)\b(?:(?:is\s+)?related\s+to|see(?:\s+also)?|part\s+of|follow[- ]?up\s+(?:to|of|for)|cf\.?)\s*:?\s*(?:https?://\S+/(?:issues|pull|pulls|merge_requests)/\d+\S*|(?:[\w.-]+/[\w.-]+)?(?:#|gh-)\d+\b)`)
	// "[svn r37305]" prefixes of converted Subversion commits.
	svnRev = regexp.MustCompile(`\[svn r\d+\]\s*`)
	// A trailer line: "Key: value" or "Key #value".
	trailerLine = regexp.MustCompile(`^([A-Za-z][A-Za-z -]*[A-Za-z])\s*[:#]\s*\S`)
	// Any issue-like number reference, for IssueRefs.
	anyRef = regexp.MustCompile(`(?i)(?:\b([\w.-]+/[\w.-]+))?(?:#|\bgh-)(\d+)\b`)
	spaces = regexp.MustCompile(`[ \t]+`)
)

// CleanMessage turns a commit message into a query: its subject and body
// without trailers and sign-offs, issue and pull-request references
// (numbers, "Fixes #12", forge URLs), cherry-pick notes and CI tags, with
// runs of spaces folded and blank lines collapsed. An empty result means
// the message says nothing about the change.
func CleanMessage(msg string) string {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	lines := strings.Split(msg, "\n")
	// Trailers live in the last paragraph; drop such lines anywhere after
	// the subject, since tools also put them mid-body.
	var kept []string
	for i, line := range lines {
		t := strings.TrimSpace(line)
		if i > 0 && isTrailer(t) || cherryPick.MatchString(t) {
			continue
		}
		kept = append(kept, line)
	}
	out := strings.Join(kept, "\n")
	out = leadRef.ReplaceAllString(out, "")
	out = refURL.ReplaceAllString(out, "")
	out = closingRef.ReplaceAllString(out, "")
	out = bareRef.ReplaceAllString(out, " ")
	out = ciTag.ReplaceAllString(out, "")
	out = svnRev.ReplaceAllString(out, "")
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(spaces.ReplaceAllString(line, " "))
		line = strings.TrimRight(strings.TrimLeft(line, " ,;.:"), " ,;")
		if isEmptyLine(line) {
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return strings.Join(paras, "\n\n")
}

// isTrailer reports whether a line is a trailer or sign-off.
func isTrailer(line string) bool {
	m := trailerLine.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	key := strings.ToLower(m[1])
	for _, k := range trailerKeys {
		if key == k {
			return true
		}
	}
	for _, k := range refKeys {
		if key == k {
			rest := refURL.ReplaceAllString(line[len(m[1]):], "")
			rest = anyRef.ReplaceAllString(rest, "")
			return !strings.ContainsFunc(rest, unicode.IsLetter)
		}
	}
	return false
}

// isEmptyLine: nothing left but punctuation.
func isEmptyLine(line string) bool {
	return strings.Trim(line, " -*.,:;()[]") == ""
}

// Ref is an issue or pull-request number a message references, with the
// owner/name it names when it names one ("" for the message's own
// repository).
type Ref struct {
	Repo   string
	Number int
}

// IssueRefs lists the issue and pull-request numbers msg references
// ("#12", "gh-12", "owner/name#12", forge URLs), each once, in order.
func IssueRefs(msg string) []Ref {
	var out []Ref
	seen := map[Ref]bool{}
	add := func(r Ref) {
		if r.Number > 0 && !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	for _, u := range refURL.FindAllString(msg, -1) {
		parts := strings.Split(strings.TrimRight(u, "/.,)"), "/")
		for i := len(parts) - 1; i > 0; i-- {
			if n, err := strconv.Atoi(strings.TrimRight(parts[i], ".,)#")); err == nil {
				repo := ""
				if i >= 4 {
					repo = parts[i-3] + "/" + parts[i-2]
				}
				add(Ref{Repo: repo, Number: n})
				break
			}
		}
	}
	for _, m := range anyRef.FindAllStringSubmatch(refURL.ReplaceAllString(msg, ""), -1) {
		n, _ := strconv.Atoi(m[2])
		add(Ref{Repo: m[1], Number: n})
	}
	return out
}
