package gitrepo

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/locus-dev/locus/schema"
)

// ReadSpecs parses repository specs from arguments and the lines of a file
// (# comments allowed), rejecting duplicates and credentials in URLs; a
// relative local path is taken relative to dir ("": the working
// directory). Errors about a line of the file name it as FILE:LINE.
func ReadSpecs(args []string, file, dir string) ([]schema.RepoSpec, error) {
	lines := append([]string(nil), args...)
	where := make([]string, len(args)) // "" for arguments, FILE:LINE for file lines
	if file != "" {
		ls, ws, err := ListLines(file)
		if err != nil {
			return nil, err
		}
		lines, where = append(lines, ls...), append(where, ws...)
	}
	seen := map[schema.RepoName]string{}
	var out []schema.RepoSpec
	for i, l := range lines {
		// Checked before anything quotes the line: a password in it would
		// be printed, logged and stored (manifest, run history, clone config).
		if masked, ok := schema.MaskCredentials(l); ok {
			return nil, fmt.Errorf("%srepository URL %s: credentials in a URL would be stored and logged; drop them and set LOCUS_GIT_TOKEN (or use a git credential helper)", where[i], masked)
		}
		// Local paths come back absolute and named after their origin remote.
		s, err := ResolveSpecIn(l, dir)
		if err != nil {
			return nil, fmt.Errorf("%s%w", where[i], err)
		}
		if prev, ok := seen[s.Name]; ok {
			return nil, fmt.Errorf("%srepository %s given twice (%q and %q); name one of them: other/name=%s", where[i], s.Name, prev, l, s.URL)
		}
		seen[s.Name] = l
		out = append(out, s)
	}
	return out, nil
}

// ListLines reads a list file: its lines without surrounding space, blank
// lines and # comments, a byte order mark on the first dropped; where[i]
// is "FILE:LINE: " of lines[i], for errors.
func ListLines(file string) (lines, where []string, err error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if n == 1 {
			l = strings.TrimPrefix(l, "\ufeff") // a byte order mark from a Windows editor
		}
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
			where = append(where, fmt.Sprintf("%s:%d: ", file, n))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", file, err)
	}
	return lines, where, nil
}
