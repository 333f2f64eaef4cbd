package backlog

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Where a record's id may be, in order of preference.
var (
	recordIDFields = []string{"id", "instance_id", "number"}
	githubIDFields = []string{"number"}
)

// jsonl reads one JSON object per line; blank lines are skipped.
func (p *parser) jsonl(data []byte) {
	line := 0
	for len(data) > 0 {
		line++
		var l []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		l = bytes.TrimRight(l, "\r")
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		r := record{line: line, idFields: recordIDFields}
		fields, msg := jsonObject(l)
		if msg != "" {
			p.fail(r, "", "", "%s", msg)
			continue
		}
		r.get = fields.get
		p.add(r)
	}
}

// jsonFields is one decoded JSON object, values still raw so that invalid
// UTF-8 can be told apart from U+FFFD (encoding/json replaces it silently).
type jsonFields map[string]json.RawMessage

func jsonObject(raw []byte) (jsonFields, string) {
	var m jsonFields
	if err := json.Unmarshal(raw, &m); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return nil, fmt.Sprintf("want a JSON object, got a JSON %s", ute.Value)
		}
		return nil, "not a JSON object: " + err.Error()
	}
	if m == nil { // the literal null
		return nil, "want a JSON object, got null"
	}
	return m, ""
}

func (m jsonFields) get(field string) value {
	raw, ok := m[field]
	if !ok {
		return value{}
	}
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return value{}
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return value{Err: "not a JSON string: " + err.Error()}
		}
		return value{Text: s, Present: true, Invalid: !utf8.Valid(raw)}
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		if field == "id" || field == "instance_id" || field == "number" {
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				return value{Text: strconv.FormatInt(n, 10), Present: true}
			}
			return value{Err: fmt.Sprintf("want a string or an integer, got %s", raw)}
		}
		return value{Err: fmt.Sprintf("want a string, got the number %s", raw)}
	}
	kind := map[byte]string{'{': "an object", '[': "an array", 't': "true", 'f': "false"}[raw[0]]
	if kind == "" {
		kind = "a JSON value"
	}
	return value{Err: "want a string, got " + kind}
}

// csvKnown are the CSV columns locus reads; others are ignored.
var csvKnown = map[string]bool{"id": true, "instance_id": true, "number": true, "repo": true,
	"base_commit": true, "problem_statement": true, "title": true, "body": true, "url": true, "html_url": true}

// csvHeader reads and checks the header row: column name (lower case,
// trimmed) → index, for the columns locus reads.
func csvHeader(data []byte) (map[string]int, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	h, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("CSV header: %w", err)
	}
	cols := map[string]int{}
	for i, name := range h {
		name = strings.ToLower(strings.TrimSpace(name))
		if !csvKnown[name] {
			continue
		}
		if _, dup := cols[name]; dup {
			return nil, fmt.Errorf("CSV header: column %q twice", name)
		}
		cols[name] = i
	}
	has := func(names ...string) bool {
		for _, n := range names {
			if _, ok := cols[n]; ok {
				return true
			}
		}
		return false
	}
	if !has("id", "instance_id", "number") || !has("problem_statement", "title", "body") {
		return nil, fmt.Errorf("CSV header %q names no id column (id, instance_id or number) or no text column (problem_statement, title or body)", h)
	}
	return cols, nil
}

// csv reads a header row and one record per row (quoted fields may span lines).
func (p *parser) csv(data []byte) error {
	cols, err := csvHeader(data)
	if err != nil {
		return err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, _ := r.Read()
	lastErrLine := -1
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			if pe.StartLine == lastErrLine { // no progress: stop rather than loop
				return nil
			}
			lastErrLine = pe.StartLine
			if last := lineCount(data); errors.Is(pe.Err, csv.ErrQuote) && pe.Line >= last && last > pe.StartLine {
				// The usual cause: a quote opened and never closed swallows
				// every row after it; say so rather than blame the last line.
				p.fail(record{line: pe.StartLine}, "", "", "CSV: a quoted field opened on line %d is never closed, so lines %d to %d were read into it (the rows there are not read)",
					pe.StartLine, pe.StartLine, last)
				continue
			}
			p.fail(record{line: pe.StartLine}, "", "", "CSV: %v (line %d, column %d)", pe.Err, pe.Line, pe.Column)
			continue
		}
		if err != nil {
			return err
		}
		line, _ := r.FieldPos(0)
		rr := record{line: line, idFields: recordIDFields}
		if len(rec) != len(header) {
			p.fail(rr, "", "", "%d fields, the header names %d", len(rec), len(header))
			continue
		}
		rr.get = func(field string) value {
			i, ok := cols[field]
			if !ok || rec[i] == "" {
				return value{}
			}
			return value{Text: rec[i], Present: true, Invalid: !utf8.ValidString(rec[i])}
		}
		p.add(rr)
	}
}

// lineCount is the number of lines in data (a last line without a newline counts).
func lineCount(data []byte) int {
	n := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

// jsonArray reads one or more JSON arrays of objects (a GitHub issues
// export, or `gh api --paginate` output). A syntax error ends the file: the
// elements before it are kept and the error is reported at the element it
// is in.
func (p *parser) jsonArray(data []byte) {
	dec := json.NewDecoder(bytes.NewReader(data))
	lines := lineCounter{data: data}
	index := 0
	fail := func(off int64, msg string) {
		p.fail(record{line: lines.at(skipSep(data, off)), element: true, index: index}, "", "", "%s", msg)
	}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			fail(dec.InputOffset(), "not JSON: "+err.Error())
			return
		}
		if d, ok := tok.(json.Delim); !ok || d != '[' {
			fail(dec.InputOffset(), fmt.Sprintf("want a JSON array, found %v", tok))
			return
		}
		for dec.More() {
			start := skipSep(data, dec.InputOffset())
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				fail(start, "not JSON: "+err.Error())
				return
			}
			r := record{line: lines.at(start), element: true, index: index}
			index++
			fields, msg := jsonObject(raw)
			if msg != "" {
				p.fail(r, "", "", "%s", msg)
				continue
			}
			if pr := fields.get("pull_request"); pr.Present || pr.Err != "" {
				p.out.SkippedPullRequests++
				continue
			}
			r.get = fields.get
			r.idFields = recordIDFields
			if _, ok := fields["number"]; ok {
				r.idFields = githubIDFields
				r.repoFallback = repoFromAPIURL(fields.get("repository_url").Text)
			}
			p.add(r)
		}
		if _, err := dec.Token(); err != nil { // the closing ]
			fail(dec.InputOffset(), "not JSON: "+err.Error())
			return
		}
	}
}

// repoFromAPIURL turns https://api.github.com/repos/OWNER/NAME into OWNER/NAME.
func repoFromAPIURL(u string) string {
	_, rest, ok := strings.Cut(u, "/repos/")
	if !ok {
		return ""
	}
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" || checkShort(rest, maxRepoBytes, true) != "" {
		return ""
	}
	return parts[0] + "/" + parts[1]
}

// skipSep moves off past white space and a comma, to where the next value starts.
func skipSep(data []byte, off int64) int64 {
	for off < int64(len(data)) && (isJSONSpace(data[off]) || data[off] == ',') {
		off++
	}
	return off
}

// lineCounter gives the 1-based line of increasing offsets in data.
type lineCounter struct {
	data []byte
	off  int64
	line int
}

func (c *lineCounter) at(off int64) int {
	if c.line == 0 {
		c.line = 1
	}
	if off < c.off { // not expected; count again
		c.off, c.line = 0, 1
	}
	off = min(off, int64(len(c.data)))
	c.line += bytes.Count(c.data[c.off:off], []byte{'\n'})
	c.off = off
	return c.line
}
