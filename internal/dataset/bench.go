// Package dataset holds what the benchmarks are made of: it loads the
// benchmark files of ../shared/bench (JSON Lines, one instance per line),
// resolves the bare git repositories they refer to, and derives an instance's
// gold functions from its patch over the code graph at the base commit
// (GoldFromPatch). Triplet mining and evaluation both read it.
//
// Two formats:
//
//   - SWE-style function-level localization (swe-dev.jsonl): SWEInstance.
//   - Commit-history file search (commits-dev.jsonl): CommitQuery.
//
// Unknown fields are ignored. Loaders reject missing required fields and malformed JSON
// with an error naming the file and the 1-based line; blank lines are skipped.
package dataset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// SWEInstance is one line of swe-dev.jsonl.
type SWEInstance struct {
	InstanceID       string `json:"instance_id"`
	Repo             string `json:"repo"`     // "owner/name"
	Language         string `json:"language"` // "python", "java", "go", ...
	BaseCommit       string `json:"base_commit"`
	ProblemStatement string `json:"problem_statement"`
	Patch            string `json:"patch"` // gold source patch, unified diff
	// GoldSpans is optional: file path → function names (a cross-check, not the ground truth).
	GoldSpans map[string][]string `json:"gold_spans,omitempty"`
	Source    string              `json:"source"`
}

// CommitQuery is one line of commits-dev.jsonl.
type CommitQuery struct {
	QueryID    string   `json:"query_id"`
	Repo       string   `json:"repo"` // "owner/name"
	Split      string   `json:"split"`
	CommitID   string   `json:"commit_id"`
	CommitDate int64    `json:"commit_date"` // unix seconds
	Query      string   `json:"query"`
	GoldFiles  []string `json:"gold_files"`
}

func (s *SWEInstance) validate() error {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"instance_id", s.InstanceID}, {"repo", s.Repo}, {"language", s.Language},
		{"base_commit", s.BaseCommit}, {"problem_statement", s.ProblemStatement}, {"patch", s.Patch},
	} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing or empty field(s) %s", strings.Join(missing, ", "))
	}
	return checkRepo(s.Repo)
}

func (q *CommitQuery) validate() error {
	var missing []string
	for _, f := range []struct{ name, v string }{
		{"query_id", q.QueryID}, {"repo", q.Repo}, {"commit_id", q.CommitID}, {"query", q.Query},
	} {
		if strings.TrimSpace(f.v) == "" {
			missing = append(missing, f.name)
		}
	}
	if q.CommitDate <= 0 {
		missing = append(missing, "commit_date")
	}
	if len(q.GoldFiles) == 0 {
		missing = append(missing, "gold_files")
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing or empty field(s) %s", strings.Join(missing, ", "))
	}
	for i, g := range q.GoldFiles {
		if g == "" {
			return fmt.Errorf("gold_files[%d] is empty", i)
		}
	}
	return checkRepo(q.Repo)
}

func checkRepo(repo string) error {
	if _, _, err := SplitRepo(repo); err != nil {
		return err
	}
	return nil
}

// SplitRepo splits "owner/name" into its two parts.
func SplitRepo(repo string) (owner, name string, err error) {
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") ||
		owner == "." || owner == ".." || name == "." || name == ".." {
		return "", "", fmt.Errorf("repo %q: want \"owner/name\"", repo)
	}
	return owner, name, nil
}

// LoadSWE reads a swe-dev.jsonl style file.
func LoadSWE(path string) ([]SWEInstance, error) {
	return loadFile[SWEInstance](path, "instance_id", func(x *SWEInstance) string { return x.InstanceID }, (*SWEInstance).validate)
}

// ReadSWE reads SWE instances from r; name is used in error messages.
func ReadSWE(r io.Reader, name string) ([]SWEInstance, error) {
	return read[SWEInstance](r, name, "instance_id", func(x *SWEInstance) string { return x.InstanceID }, (*SWEInstance).validate)
}

// LoadCommits reads a commits-dev.jsonl style file.
func LoadCommits(path string) ([]CommitQuery, error) {
	return loadFile[CommitQuery](path, "query_id", func(x *CommitQuery) string { return x.QueryID }, (*CommitQuery).validate)
}

// ReadCommits reads commit queries from r; name is used in error messages.
func ReadCommits(r io.Reader, name string) ([]CommitQuery, error) {
	return read[CommitQuery](r, name, "query_id", func(x *CommitQuery) string { return x.QueryID }, (*CommitQuery).validate)
}

func loadFile[T any](path, idField string, id func(*T) string, validate func(*T) error) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	return read(f, path, idField, id, validate)
}

// maxLine bounds one JSON line (problem statements and patches can be long).
const maxLine = 64 << 20

func read[T any](r io.Reader, name, idField string, id func(*T) string, validate func(*T) error) ([]T, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	var out []T
	seen := make(map[string]int)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if line == 1 {
			b = bytes.TrimPrefix(b, []byte("\ufeff"))
		}
		if len(b) == 0 {
			continue
		}
		var x T
		dec := json.NewDecoder(bytes.NewReader(b))
		if err := dec.Decode(&x); err != nil {
			return nil, fmt.Errorf("bench: %s:%d: %w", name, line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("bench: %s:%d: more than one JSON value on the line", name, line)
		}
		if err := validate(&x); err != nil {
			return nil, fmt.Errorf("bench: %s:%d: %w", name, line, err)
		}
		if prev, dup := seen[id(&x)]; dup {
			return nil, fmt.Errorf("bench: %s:%d: duplicate %s %q (first on line %d)", name, line, idField, id(&x), prev)
		}
		seen[id(&x)] = line
		out = append(out, x)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("bench: %s:%d: line longer than %d bytes", name, line+1, maxLine)
		}
		return nil, fmt.Errorf("bench: %s: after line %d: %w", name, line, err)
	}
	return out, nil
}

// IsCommitFile tells a commits-dev file from a swe-dev one by its first
// record: commit queries have a "query_id".
func IsCommitFile(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			return strings.Contains(l, `"query_id"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Errorf("bench: read %s: %w", path, err)
	}
	return false, fmt.Errorf("bench: %s holds no records", path)
}
