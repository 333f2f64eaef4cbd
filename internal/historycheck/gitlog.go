// Package historycheck compares the commits table with what git itself says
// about the same commits: `git log --raw --numstat -M
// --diff-merges=first-parent`, commit by commit. Every difference must fall in
// a documented class (Classes) or the check fails.
package historycheck

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

// GitFile is one file of one commit as `git log --raw --numstat` shows it.
type GitFile struct {
	Status           byte   // A, M, D, R, T (type change) as in --raw
	Score            int    // similarity of a rename, 0-100
	Path             string // the path after the change (before it for D)
	OldPath          string // the path before a rename; "" otherwise
	OldMode, NewMode uint32
	OldBlob, NewBlob string // "" for the side that does not exist
	Additions        int
	Deletions        int
	Binary           bool // numstat printed "-	-"
}

// GitCommit is one commit of `git log` and its files against its first parent.
type GitCommit struct {
	ID    string
	Files []GitFile
}

// GitLogOptions say how git is asked.
type GitLogOptions struct {
	// RenameLimit is passed as diff.renameLimit; default 1000 (git's default).
	RenameLimit int
	// Git is the git executable; default "git" on PATH.
	Git string
	// Base, if set, leaves out the commits reachable from it.
	Base string
}

// GitLog runs git log on gitDir from head and calls fn for each commit, in
// git's order, with its raw and numstat lines joined by path. The user's and
// system's git configuration are not read, so nothing there (diff.renames=copies,
// a different rename limit, an external diff) changes what git reports.
func GitLog(ctx context.Context, gitDir, head string, opts GitLogOptions, fn func(*GitCommit) error) error {
	return runLog(ctx, gitDir, head, opts, []string{"-z", "--raw", "--numstat", "--no-abbrev"},
		func(r *bufio.Reader) error { return parseGitLog(r, fn) })
}

// runLog runs `git log ARGS -M --diff-merges=first-parent` from head (and not
// from opts.Base) with the user's and system's configuration left out and
// the options that decide what git reports set, and parses its output.
func runLog(ctx context.Context, gitDir, head string, opts GitLogOptions, args []string, parse func(*bufio.Reader) error) error {
	if opts.RenameLimit <= 0 {
		opts.RenameLimit = 1000
	}
	if opts.Git == "" {
		opts.Git = "git"
	}
	what := "git log " + strings.Join(args, " ")
	cmd := exec.CommandContext(ctx, opts.Git, "--git-dir", gitDir,
		"-c", "core.quotepath=false", "-c", "diff.renames=true",
		"-c", "diff.renameLimit="+strconv.Itoa(opts.RenameLimit),
		"-c", "diff.algorithm=myers", "-c", "diff.indentHeuristic=true", "log")
	cmd.Args = append(cmd.Args, args...)
	cmd.Args = append(cmd.Args, "-M", "--diff-merges=first-parent",
		"--no-ext-diff", "--no-textconv", "--no-color", "--format=%x00C %H", head)
	if opts.Base != "" {
		cmd.Args = append(cmd.Args, "^"+opts.Base)
	}
	cmd.Args = append(cmd.Args, "--")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "LC_ALL=C")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s in %s: %w", what, gitDir, err)
	}
	perr := parse(bufio.NewReaderSize(out, 1<<20))
	if perr != nil {
		io.Copy(io.Discard, out)
	}
	werr := cmd.Wait()
	if perr != nil {
		return fmt.Errorf("%s in %s: %w", what, gitDir, perr)
	}
	if werr != nil {
		return fmt.Errorf("%s in %s: %w: %s", what, gitDir, werr, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// parseGitLog reads `git log -z --raw --numstat --format=%x00C %H`: per
// commit a field "C <id>", then one field per raw line (":modes blobs
// status") followed by its path fields (two for a rename), then numstat
// fields ("adds<TAB>dels<TAB>path", or "adds<TAB>dels<TAB>" followed by the
// old and new paths of a rename).
func parseGitLog(r *bufio.Reader, fn func(*GitCommit) error) error {
	var cur *GitCommit
	byPath := map[string]int{} // file index by its path in cur
	flush := func() error {
		if cur == nil {
			return nil
		}
		err := fn(cur)
		cur = nil
		return err
	}
	field := func() (string, error) {
		s, err := r.ReadString(0)
		if err != nil {
			if errors.Is(err, io.EOF) && s == "" {
				return "", io.EOF
			}
			if errors.Is(err, io.EOF) {
				return s, nil // the last field of the stream
			}
			return "", err
		}
		return s[:len(s)-1], nil
	}
	for {
		f, err := field()
		if errors.Is(err, io.EOF) {
			return flush()
		}
		if err != nil {
			return err
		}
		f = strings.TrimLeft(f, "\n")
		switch {
		case f == "":
			continue
		case strings.HasPrefix(f, "C "):
			if err := flush(); err != nil {
				return err
			}
			cur = &GitCommit{ID: strings.TrimSpace(f[2:])}
			clear(byPath)
		case cur == nil:
			return fmt.Errorf("output %q before the first commit", f)
		case f[0] == ':':
			gf, err := parseRaw(f)
			if err != nil {
				return err
			}
			p, err := field()
			if err != nil {
				return fmt.Errorf("commit %s: raw line %q without its path: %w", cur.ID, f, err)
			}
			gf.Path = p
			if gf.Status == 'R' || gf.Status == 'C' {
				if gf.Path, err = field(); err != nil {
					return fmt.Errorf("commit %s: rename %q without its new path: %w", cur.ID, p, err)
				}
				gf.OldPath = p
			}
			byPath[gf.Path] = len(cur.Files)
			cur.Files = append(cur.Files, gf)
		default:
			adds, rest, ok1 := strings.Cut(f, "\t")
			dels, p, ok2 := strings.Cut(rest, "\t")
			if !ok1 || !ok2 {
				return fmt.Errorf("commit %s: unexpected field %q", cur.ID, f)
			}
			if p == "" { // a rename: old and new path follow
				if _, err := field(); err != nil {
					return fmt.Errorf("commit %s: numstat rename without paths: %w", cur.ID, err)
				}
				if p, err = field(); err != nil {
					return fmt.Errorf("commit %s: numstat rename without its new path: %w", cur.ID, err)
				}
			}
			i, ok := byPath[p]
			if !ok {
				return fmt.Errorf("commit %s: numstat for %q with no raw line", cur.ID, p)
			}
			gf := &cur.Files[i]
			if adds == "-" && dels == "-" {
				gf.Binary = true
				continue
			}
			if gf.Additions, err = strconv.Atoi(adds); err != nil {
				return fmt.Errorf("commit %s: numstat %q: %w", cur.ID, f, err)
			}
			if gf.Deletions, err = strconv.Atoi(dels); err != nil {
				return fmt.Errorf("commit %s: numstat %q: %w", cur.ID, f, err)
			}
		}
	}
}

// parseRaw reads ":100644 100644 <old> <new> M" (R and C carry a score).
func parseRaw(f string) (GitFile, error) {
	parts := strings.Fields(f[1:])
	if len(parts) != 5 || parts[4] == "" {
		return GitFile{}, fmt.Errorf("raw line %q: want modes, blobs and status", f)
	}
	var gf GitFile
	for i, m := range []*uint32{&gf.OldMode, &gf.NewMode} {
		v, err := strconv.ParseUint(parts[i], 8, 32)
		if err != nil {
			return GitFile{}, fmt.Errorf("raw line %q: mode: %w", f, err)
		}
		*m = uint32(v)
	}
	zero := func(s string) string {
		if strings.Trim(s, "0") == "" {
			return ""
		}
		return s
	}
	gf.OldBlob, gf.NewBlob = zero(parts[2]), zero(parts[3])
	gf.Status = parts[4][0]
	if len(parts[4]) > 1 {
		s, err := strconv.Atoi(parts[4][1:])
		if err != nil {
			return GitFile{}, fmt.Errorf("raw line %q: score: %w", f, err)
		}
		gf.Score = s
	}
	return gf, nil
}

// GitPatches runs `git log -p` with the same options as GitLog and calls fn
// for each commit with a hash (HunksHash) of each file's hunks, in git's
// order. The section heading git appends to a hunk's "@@" line is left out,
// as locus does not store it; files without hunks (binary, mode changes,
// pure renames) give nothing.
func GitPatches(ctx context.Context, gitDir, head string, opts GitLogOptions, fn func(commit string, hunks []uint64) error) error {
	return runLog(ctx, gitDir, head, opts, []string{"-p", "-U3"},
		func(r *bufio.Reader) error { return parsePatches(r, fn) })
}

// HunksHash is the hash GitPatches gives a file's hunks, for comparing a
// stored diff with git's.
func HunksHash(hunks []byte) uint64 {
	h := fnv.New64a()
	h.Write(hunks)
	return h.Sum64()
}

func parsePatches(r *bufio.Reader, fn func(string, []uint64) error) error {
	var commit string
	var hunks []uint64
	var cur hash.Hash64 // the current file's hunks, nil outside them
	endFile := func() {
		if cur != nil {
			hunks = append(hunks, cur.Sum64())
			cur = nil
		}
	}
	flush := func() error {
		endFile()
		if commit == "" {
			return nil
		}
		err := fn(commit, hunks)
		commit, hunks = "", nil
		return err
	}
	inFile := false
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			switch {
			case line[0] == 0 && bytes.HasPrefix(line, []byte("\x00C ")):
				if ferr := flush(); ferr != nil {
					return ferr
				}
				commit, inFile = string(bytes.TrimSpace(line[3:])), false
			case bytes.HasPrefix(line, []byte("diff --git ")) || bytes.HasPrefix(line, []byte("diff --cc ")):
				endFile()
				inFile = true
			case !inFile:
				// the blank line after the commit line
			case bytes.HasPrefix(line, []byte("@@ ")):
				if cur == nil {
					cur = fnv.New64a()
				}
				// "@@ -a,b +c,d @@ heading" -> "@@ -a,b +c,d @@"
				if i := bytes.Index(line[3:], []byte(" @@")); i >= 0 {
					cur.Write(line[:3+i+3])
					cur.Write([]byte("\n"))
				} else {
					cur.Write(line)
				}
			case cur != nil && (line[0] == ' ' || line[0] == '+' || line[0] == '-' || line[0] == '\\'):
				cur.Write(line)
			case cur != nil && len(bytes.TrimSpace(line)) == 0:
				endFile() // the blank line between commits
				inFile = false
			}
		}
		if errors.Is(err, io.EOF) {
			return flush()
		}
		if err != nil {
			return err
		}
	}
}
