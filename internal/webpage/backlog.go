package webpage

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/locus-dev/locus/internal/backlog"
	"github.com/locus-dev/locus/schema"
)

// BacklogRun is what the backlog page shows of a run: its summary (zero
// while the run is unfinished), the input issues (titles, links), the
// stored results, and each repository's URL (for links to the code).
type BacklogRun struct {
	Run      string
	Summary  *backlog.Summary
	Issues   []schema.BacklogIssue
	Results  []backlog.Result
	RepoURLs map[string]string
	// Records are the input records that were not issues (parse errors).
	Records []backlog.Failure
}

// backlogData is the template's view of a run.
type backlogData struct {
	Total, Done, Failed, Pending, ParseErrors int
	TokensIn, TokensOut                       int
	Method, Selector, Cost, Time              string
	Empty                                     string
	Records                                   []backlog.Failure
	Issues                                    []issueView
	// Packed, for a large run, is every issue's Body (a JSON array, in
	// order), gzipped and in base64: the page's script unpacks it.
	Packed string
}

type issueView struct {
	ID, Title, URL, Repo, Status, Error, Top, Search string
	TokensIn, TokensOut                              int
	Notes                                            []string
	Items                                            []itemView
	Open                                             bool
	// Body is the issue's rendered ranking, or empty when it is packed
	// (backlogData.Packed) at index Part.
	Body template.HTML
	Part int
}

type itemView struct {
	Rank                         int
	Score                        string
	Bar                          int // pixels, of barWidth
	Where, Name, Link, Code, Why string
}

const (
	barWidth = 80
	// openFirst issues are shown expanded; the rest one click away.
	openFirst = 3
	// maxTitle bounds the title shown (the issue's first line when it has
	// no title of its own).
	maxTitle = 200
)

// WriteBacklog writes the backlog report of r.
func WriteBacklog(w io.Writer, r BacklogRun) error {
	d := backlogView(r)
	if err := renderBodies(&d); err != nil {
		return err
	}
	sub := fmt.Sprintf("%d issues: %d done, %d failed", d.Total, d.Done, d.Failed)
	if d.Pending > 0 {
		sub += fmt.Sprintf(", %d not ranked yet", d.Pending)
	}
	return render(w, "backlog", "Backlog run "+text(r.Run), sub, d)
}

func backlogView(r BacklogRun) backlogData {
	d := backlogData{Records: r.Records}
	input := map[string]schema.BacklogIssue{}
	for _, is := range r.Issues {
		input[is.ID] = is
	}
	stored := map[string]bool{}
	for _, res := range r.Results {
		stored[res.IssueID] = true
		is := input[res.IssueID]
		v := issueView{ID: text(res.IssueID), Title: titleOf(is), URL: webURL(is.URL), Repo: text(res.Repo), Status: "done",
			Error: text(res.Error), TokensIn: res.TokensIn, TokensOut: res.TokensOut}
		for _, n := range res.Notes {
			v.Notes = append(v.Notes, text(n))
		}
		if res.Error != "" {
			v.Status = "failed"
			d.Failed++
		} else {
			d.Done++
		}
		top := 0.0
		for _, it := range res.Items {
			top = max(top, it.Score)
		}
		for _, it := range res.Items {
			path, name, _ := strings.Cut(it.FunctionID, ":")
			if it.File != "" {
				path = it.File
			}
			where := path
			if it.Line > 0 {
				where += ":" + strconv.Itoa(it.Line)
			}
			bar := 0
			if top > 0 && it.Score > 0 {
				bar = max(1, int(it.Score/top*barWidth+0.5))
			}
			v.Items = append(v.Items, itemView{Rank: it.Rank, Score: strconv.FormatFloat(it.Score, 'f', 3, 64), Bar: bar,
				Where: text(where), Name: text(name), Link: CodeLink(r.RepoURLs[res.Repo], res.Commit, path, it.Line),
				Code: text(it.Code), Why: text(it.Why)})
		}
		if len(v.Items) > 0 {
			v.Top = v.Items[0].Where
		}
		files := strings.Join(res.Files, " ")
		v.Search = strings.Join([]string{v.ID, v.Title, v.Repo, v.Status, text(files)}, " ")
		v.Open = len(d.Issues) < openFirst
		d.Issues = append(d.Issues, v)
		d.TokensIn += res.TokensIn
		d.TokensOut += res.TokensOut
		if d.Method == "" {
			d.Method = res.Method
		}
		if d.Selector == "" {
			d.Selector = res.Selector
		}
	}
	for _, is := range r.Issues {
		if !stored[is.ID] {
			d.Pending++
		}
	}
	d.Total = d.Done + d.Failed + d.Pending
	if s := r.Summary; s != nil {
		d.Total, d.ParseErrors = max(d.Total, s.Total), s.ParseErrors
		d.Method, d.Selector = text(s.Method), text(s.Selector)
		if s.EstimatedCostUSD > 0 {
			d.Cost = fmt.Sprintf("$%.2f", s.EstimatedCostUSD)
		}
		if !s.Started.IsZero() && !s.Finished.IsZero() {
			d.Time = s.Finished.Sub(s.Started).Round(time.Millisecond).String()
		}
	}
	d.ParseErrors = max(d.ParseErrors, len(r.Records))
	for i := range d.Records {
		d.Records[i] = backlog.Failure{IssueID: text(d.Records[i].IssueID), Source: text(d.Records[i].Source), Error: text(d.Records[i].Error)}
	}
	switch {
	case d.Total == 0 && d.ParseErrors == 0:
		d.Empty = "This run has no issues."
	case d.Total == 0:
		d.Empty = "No record of the input could be read as an issue: this run has no issues."
	case d.Done == 0 && d.Pending == 0:
		d.Empty = fmt.Sprintf("Every issue failed (%d): none was ranked.", d.Failed)
	}
	return d
}

// inlineLimit is the size of the issues' rankings up to which they are
// written into the page as they are; larger ones are packed.
var inlineLimit = 256 << 10

// renderBodies renders each issue's ranking with the page's template, and
// packs them when they are larger than inlineLimit in all: a thousand
// issues of twenty functions each are about 15 MB of HTML, and a tenth of
// that gzipped.
func renderBodies(d *backlogData) error {
	t := templates["backlog"]
	total := 0
	for i := range d.Issues {
		var buf bytes.Buffer
		if err := t.ExecuteTemplate(&buf, "issuebody", d.Issues[i]); err != nil {
			return fmt.Errorf("backlog page: issue %q: %w", d.Issues[i].ID, err)
		}
		// html/template wrote it: it is HTML, escaped in its contexts.
		d.Issues[i].Body = template.HTML(buf.String())
		total += buf.Len()
	}
	if total <= inlineLimit {
		return nil
	}
	parts := make([]string, len(d.Issues))
	for i := range d.Issues {
		parts[i], d.Issues[i].Body, d.Issues[i].Part = string(d.Issues[i].Body), "", i
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(zw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(parts); err != nil {
		return fmt.Errorf("backlog page: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("backlog page: %w", err)
	}
	d.Packed = base64.StdEncoding.EncodeToString(buf.Bytes())
	return nil
}

// titleOf is the issue's title, else the first line of its text.
func titleOf(is schema.BacklogIssue) string {
	t := is.Title
	if strings.TrimSpace(t) == "" {
		t, _, _ = strings.Cut(strings.TrimSpace(is.Text), "\n")
	}
	t = text(strings.TrimSpace(t))
	if len(t) > maxTitle {
		cut := maxTitle
		for cut > 0 && !utf8.RuneStart(t[cut]) {
			cut--
		}
		t = t[:cut] + "…"
	}
	return t
}

// text makes s fit to show: valid UTF-8, control characters other than
// newline and tab shown as U+FFFD. (html/template escapes what is left.)
func text(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexFunc(s, isHidden) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isHidden(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func isHidden(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }

// webURL is u when it is an http(s) URL (backlog.Issue.URL is one), else "".
func webURL(u string) string {
	if strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://") {
		return text(u)
	}
	return ""
}
