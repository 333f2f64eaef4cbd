// Package backlog reads issue backlogs (JSON Lines, CSV, GitHub issue exports) and writes localization results (Parquet, JSON Lines, a Markdown summary).
package backlog

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Format of a backlog file.
type Format string

// Formats, detected by content (Detect).
const (
	// FormatJSONL is JSON Lines: one object per line with id or instance_id,
	// repo, optional base_commit, and problem_statement or title and body
	// (a SWE-bench row is one).
	FormatJSONL Format = "jsonl"
	// FormatCSV is CSV whose header row names the same columns.
	FormatCSV Format = "csv"
	// FormatGitHub is the JSON array GitHub's REST API returns for
	// GET /repos/{owner}/{repo}/issues (several arrays back to back, as
	// `gh api --paginate` prints them, are read as one). Pull requests are
	// skipped. Elements without "number" are read like JSON Lines records,
	// so a JSON array of SWE-bench rows is read too.
	FormatGitHub Format = "github"
)

// DefaultMaxTextBytes caps an issue's text (see ParseOptions.MaxTextBytes).
const DefaultMaxTextBytes = 256 << 10

// Caps on the short fields, which end up in keys, workflow ids and logs.
const (
	maxIDBytes     = 512
	maxRepoBytes   = 4096
	maxCommitBytes = 256
)

// ErrEmpty is wrapped by Parse's error for a file with nothing in it.
var ErrEmpty = errors.New("empty backlog file")

// ErrUnknownFormat is wrapped by Detect's and Parse's error for content that is
// none of the formats.
var ErrUnknownFormat = errors.New("unknown backlog format")

// Issue is one backlog entry.
type Issue struct {
	// ID is id, instance_id or the GitHub issue number (as text); unique in its file.
	ID string `json:"id"`
	// Repo is the repository spec as given (owner/name, path, URL,
	// name=path), or ParseOptions.DefaultRepo when the record names none;
	// "" when neither does (unless ParseOptions.RequireRepo is set).
	Repo string `json:"repo,omitempty"`
	// BaseCommit, when set, is the revision to rank against.
	BaseCommit string `json:"base_commit,omitempty"`
	// Title and Body, when the record gives them separately (each cut to
	// MaxTextBytes like Text).
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
	// URL is the issue's page (html_url, else url): an absolute http or
	// https URL, or "" (a field that is not one is left out, with a note).
	URL string `json:"url,omitempty"`
	// Text is problem_statement, or Title + "\n\n" + Body (either alone when
	// the other is empty); never empty or blank, always valid UTF-8.
	Text string `json:"text"`
	// Source is "file:line" (JSON Lines and CSV: the line the record starts
	// on) or "file:#N" (the N-th element, from 0, of a JSON array).
	Source string `json:"source"`
	// Truncated: Text was longer than MaxTextBytes and was cut.
	Truncated bool `json:"truncated,omitempty"`
	// Notes says what was changed to make the record usable (text cut,
	// invalid UTF-8 replaced), one sentence each.
	Notes []string `json:"notes,omitempty"`
}

// ParseOptions tune Parse.
type ParseOptions struct {
	// DefaultRepo is the repository of records that name none (the --repo
	// flag); a GitHub issues export names none, so it needs this unless its
	// elements carry repository_url. A record's own repo wins.
	DefaultRepo string
	// RequireRepo makes a record with no repository (and no DefaultRepo) a
	// ParseError instead of an Issue with Repo "".
	RequireRepo bool
	// MaxTextBytes caps Text (and Title, Body): longer texts are cut at a
	// rune boundary, Truncated is set and a note added. 0 means
	// DefaultMaxTextBytes; negative means no cap.
	MaxTextBytes int
}

func (o ParseOptions) maxText() int {
	switch {
	case o.MaxTextBytes == 0:
		return DefaultMaxTextBytes
	case o.MaxTextBytes < 0:
		return int(^uint(0) >> 1)
	}
	return o.MaxTextBytes
}

// ParseError names the file, line (or array element) and field of a bad
// record. The record is left out; the others are not affected.
type ParseError struct {
	File string `json:"file"`
	// Line the record starts on (1-based); for an array element, the line
	// the element starts on.
	Line int `json:"line"`
	// Element is set for a record of a JSON array: Index is its position, from 0.
	Element bool `json:"element,omitempty"`
	Index   int  `json:"index,omitempty"`
	// Field is the field (column, key) at fault; "" when the record as a whole is.
	Field string `json:"field,omitempty"`
	Msg   string `json:"msg"`
	// ID of the record when it could be read, else "".
	ID string `json:"id,omitempty"`
}

// Source is where the record is: "file:line" or "file:#N".
func (e ParseError) Source() string {
	if e.Element {
		return e.File + ":#" + strconv.Itoa(e.Index)
	}
	return e.File + ":" + strconv.Itoa(e.Line)
}

// Error is `issues.jsonl:7: field "repo": missing`; an array element reads
// `issues.json:#3 (line 40): field "number": missing`.
func (e ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.Source())
	if e.Element && e.Line > 0 {
		fmt.Fprintf(&b, " (line %d)", e.Line)
	}
	b.WriteString(": ")
	if e.Field != "" {
		fmt.Fprintf(&b, "field %q: ", e.Field)
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Parsed is everything Parse learned about one file.
type Parsed struct {
	Format Format
	Issues []Issue
	Errors []ParseError
	// SkippedPullRequests counts the pull requests of a GitHub export left out.
	SkippedPullRequests int
}

// Parse reads a backlog file of any Format (detected by content). A bad
// record becomes a ParseError and does not stop the others; the error is
// for a file that cannot be read at all (empty, unknown format, a CSV
// header that names no id or text column).
func Parse(name string, data []byte, opts ParseOptions) ([]Issue, []ParseError, error) {
	p, err := ParseDetailed(name, data, opts)
	return p.Issues, p.Errors, err
}

// ParseFile is Parse of the file at path (named as given in errors and sources).
func ParseFile(path string, opts ParseOptions) ([]Issue, []ParseError, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("backlog: %w", err)
	}
	return Parse(path, data, opts)
}

// ParseDetailed is Parse that also says which format it read and how many
// pull requests it skipped.
func ParseDetailed(name string, data []byte, opts ParseOptions) (Parsed, error) {
	f, err := Detect(data)
	if err != nil {
		return Parsed{}, fmt.Errorf("backlog %s: %w", name, err)
	}
	p := &parser{name: name, opts: opts, seen: map[string]string{}, out: Parsed{Format: f}}
	data = trimBOM(data)
	switch f {
	case FormatJSONL:
		p.jsonl(data)
	case FormatCSV:
		if err := p.csv(data); err != nil {
			return Parsed{Format: f}, fmt.Errorf("backlog %s: %w", name, err)
		}
	case FormatGitHub:
		p.jsonArray(data)
	}
	return p.out, nil
}

// Detect tells the format of a backlog file from its content: a JSON array
// is FormatGitHub, a JSON object on the first line FormatJSONL, and CSV
// whose header names an id column (id, instance_id, number) and a text
// column (problem_statement, title, body) FormatCSV.
func Detect(data []byte) (Format, error) {
	data = trimBOM(data)
	i := 0
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	if i == len(data) {
		return "", ErrEmpty
	}
	switch data[i] {
	case '[':
		return FormatGitHub, nil
	case '{':
		return FormatJSONL, nil
	}
	if _, err := csvHeader(data); err == nil {
		return FormatCSV, nil
	}
	line, _, _ := strings.Cut(string(data[i:min(len(data), i+200)]), "\n")
	return "", fmt.Errorf("%w: not JSON Lines (an object per line), a JSON array (GitHub issues export) "+
		"or CSV with a header naming id/instance_id/number and problem_statement or title/body; first line: %q",
		ErrUnknownFormat, strings.TrimRight(line, "\r"))
}

func trimBOM(data []byte) []byte {
	if len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF {
		return data[3:]
	}
	return data
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// value is one field of a record as read: Text decoded (invalid UTF-8 left
// as is), Present false for a missing, null or (CSV) empty field.
type value struct {
	Text    string
	Present bool
	// Invalid: the field's bytes were not valid UTF-8 (Text may hold them
	// as is, or with U+FFFD in their place).
	Invalid bool
	// Err, when set, says why the field cannot be used (wrong JSON type).
	Err string
}

// record is one input record, whatever its format.
type record struct {
	line    int
	element bool
	index   int
	get     func(field string) value
	// idFields are the fields that may hold the id, in order of preference.
	idFields []string
	// repoFallback is the repository derived from the record itself when it
	// has no repo field (a GitHub issue's repository_url).
	repoFallback string
}

type parser struct {
	name string
	opts ParseOptions
	seen map[string]string // id → source of its first record
	out  Parsed
}

func (p *parser) fail(r record, field, id, format string, args ...any) {
	p.out.Errors = append(p.out.Errors, ParseError{File: p.name, Line: r.line, Element: r.element, Index: r.index,
		Field: field, Msg: fmt.Sprintf(format, args...), ID: id})
}

func (p *parser) source(r record) string {
	return ParseError{File: p.name, Line: r.line, Element: r.element, Index: r.index}.Source()
}

// add turns a record into an Issue, or a ParseError naming the first bad field.
func (p *parser) add(r record) {
	// id
	idField, id := "", value{}
	for _, f := range r.idFields {
		if v := r.get(f); v.Present || v.Err != "" {
			idField, id = f, v
			break
		}
	}
	if idField == "" {
		p.fail(r, r.idFields[0], "", "missing (want %s)", orList(r.idFields))
		return
	}
	if id.Err != "" {
		p.fail(r, idField, "", "%s", id.Err)
		return
	}
	if id.Invalid {
		p.fail(r, idField, "", "invalid UTF-8: %q", id.Text)
		return
	}
	ids := strings.TrimSpace(id.Text)
	if msg := checkShort(ids, maxIDBytes, false); msg != "" {
		p.fail(r, idField, "", "%s", msg)
		return
	}
	iss := Issue{ID: ids, Source: p.source(r)}

	// repo
	repo := r.get("repo")
	switch {
	case repo.Err != "":
		p.fail(r, "repo", ids, "%s", repo.Err)
		return
	case repo.Invalid:
		p.fail(r, "repo", ids, "invalid UTF-8: %q", repo.Text)
		return
	case repo.Present:
		iss.Repo = strings.TrimSpace(repo.Text)
		if msg := checkShort(iss.Repo, maxRepoBytes, false); msg != "" {
			p.fail(r, "repo", ids, "%s", msg)
			return
		}
	case p.opts.DefaultRepo != "":
		iss.Repo = p.opts.DefaultRepo
	default:
		iss.Repo = r.repoFallback
	}
	if iss.Repo == "" && p.opts.RequireRepo {
		p.fail(r, "repo", ids, "missing, and no default repository was given (--repo)")
		return
	}

	// base_commit
	if bc := r.get("base_commit"); bc.Err != "" {
		p.fail(r, "base_commit", ids, "%s", bc.Err)
		return
	} else if bc.Invalid {
		p.fail(r, "base_commit", ids, "invalid UTF-8: %q", bc.Text)
		return
	} else if bc.Present {
		iss.BaseCommit = strings.TrimSpace(bc.Text)
		if msg := checkShort(iss.BaseCommit, maxCommitBytes, true); msg != "" {
			p.fail(r, "base_commit", ids, "%s", msg)
			return
		}
		if strings.HasPrefix(iss.BaseCommit, "-") {
			p.fail(r, "base_commit", ids, "%q is not a revision (starts with -)", iss.BaseCommit)
			return
		}
	}

	// text
	texts := map[string]string{}
	for _, f := range []string{"problem_statement", "title", "body"} {
		v := r.get(f)
		if v.Err != "" {
			p.fail(r, f, ids, "%s", v.Err)
			return
		}
		if !v.Present {
			continue
		}
		s := v.Text
		if v.Invalid || !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "\uFFFD")
			iss.Notes = append(iss.Notes, fmt.Sprintf("field %q: invalid UTF-8 replaced with U+FFFD", f))
		}
		texts[f] = s
	}
	iss.Title, iss.Body = texts["title"], texts["body"]
	ps, title, body := texts["problem_statement"], strings.TrimSpace(iss.Title), strings.TrimSpace(iss.Body)
	switch {
	case strings.TrimSpace(ps) != "":
		iss.Text = ps
	case title != "" && body != "":
		iss.Text = iss.Title + "\n\n" + iss.Body
	case title != "":
		iss.Text = iss.Title
	case body != "":
		iss.Text = iss.Body
	default:
		given := []string{}
		for _, f := range []string{"problem_statement", "title", "body"} {
			if r.get(f).Present {
				given = append(given, f)
			}
		}
		if len(given) == 0 {
			p.fail(r, "problem_statement", ids, "missing: the issue has no text (want problem_statement, or title and body)")
		} else {
			p.fail(r, given[0], ids, "empty issue text (%s blank)", strings.Join(given, ", "))
		}
		return
	}
	max := p.opts.maxText()
	if len(iss.Text) > max {
		iss.Notes = append(iss.Notes, fmt.Sprintf("text cut from %d to %d bytes", len(iss.Text), max))
		iss.Text, iss.Truncated = cutUTF8(iss.Text, max), true
	}
	iss.Title, iss.Body = cutUTF8(iss.Title, max), cutUTF8(iss.Body, max)

	for _, f := range []string{"html_url", "url"} {
		u := r.get(f)
		if !u.Present || u.Err != "" {
			continue
		}
		if !isWebURL(u.Text) {
			iss.Notes = append(iss.Notes, fmt.Sprintf("field %q: not an http(s) URL, left out: %q", f, cutUTF8(strings.ToValidUTF8(u.Text, "\uFFFD"), 200)))
			continue
		}
		iss.URL = strings.TrimSpace(u.Text)
		break
	}

	if first, dup := p.seen[ids]; dup {
		p.fail(r, idField, ids, "duplicate id %q (first at %s)", ids, first)
		return
	}
	p.seen[ids] = iss.Source
	p.out.Issues = append(p.out.Issues, iss)
}

// isWebURL reports whether s is an absolute http or https URL with a host
// and no control characters or white space.
func isWebURL(s string) bool {
	s = strings.TrimSpace(s)
	if checkShort(s, maxRepoBytes, true) != "" {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// checkShort validates a one-line field (id, repo, commit).
func checkShort(s string, max int, noSpace bool) string {
	switch {
	case s == "":
		return "empty"
	case !utf8.ValidString(s):
		return fmt.Sprintf("invalid UTF-8: %q", s)
	case len(s) > max:
		return fmt.Sprintf("%d bytes, longer than the %d allowed", len(s), max)
	}
	for _, c := range s {
		if unicode.IsControl(c) {
			return fmt.Sprintf("contains %U: %q", c, s)
		}
		if noSpace && unicode.IsSpace(c) {
			return fmt.Sprintf("contains white space: %q", s)
		}
	}
	return ""
}

// cutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a rune (s is valid UTF-8).
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func orList(fs []string) string {
	switch len(fs) {
	case 1:
		return fs[0]
	case 2:
		return fs[0] + " or " + fs[1]
	}
	return strings.Join(fs[:len(fs)-1], ", ") + " or " + fs[len(fs)-1]
}
