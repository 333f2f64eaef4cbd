// Package commits scrapes a repository's commit history into Parquet parts in the object store.
package commits

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/changes"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/objio"
	"github.com/locus-dev/locus/schema"
)

// Config describes one scrape.
type Config struct {
	Bucket *blob.Bucket
	Repo   schema.RepoName
	GitDir string // the clone (bare or .git directory)
	Head   string // commit to scrape up to (hex)
	// Prev is the manifest of the last published index, nil for a first run;
	// commits reachable from Prev.Head are not scraped again.
	Prev    *schema.Manifest
	Options schema.IndexOptions
	Diff    gitrepo.DiffOptions
	// RowGroupBytes bounds the uncompressed bytes buffered per row group; default 32 MiB.
	RowGroupBytes int
	// NoFunctions leaves changed_functions empty (skips parsing both versions
	// of every changed source file); default false.
	NoFunctions bool
	// VerifyFunctions also parses whole every file version whose functions
	// were derived from the other version of its change, and counts where
	// they differ (Result.Functions); default false. For benchmarks.
	VerifyFunctions bool
	// Progress, if set, is called after each commit with (done, total).
	Progress func(done, total int)
	Logger   *slog.Logger // default slog.Default()
	// Checkpoint, if set, is called after each part but the last is
	// written, with what Resume needs to continue after it; the file-id map
	// as it stands is then stored too (once per part).
	Checkpoint func(Checkpoint)
	// Resume continues an interrupted scrape of the same Head from the same
	// Prev.Head after the parts its checkpoint lists, when they are still
	// stored as written; otherwise it is not used (with a warning) and the
	// scrape starts over. nil: start over.
	Resume *Checkpoint
}

// Checkpoint is how far a scrape got: its first parts, whole, and the
// file-id map after them.
type Checkpoint struct {
	Head       string        `json:"head"`
	Base       string        `json:"base,omitempty"` // Prev.Head; "" for the whole history
	Commits    int           `json:"commits"`        // in Parts
	Rows       int64         `json:"rows"`
	Parts      []schema.Part `json:"parts"`
	FileIDsKey string        `json:"file_ids_key"`
}

// Result is what a scrape wrote.
type Result struct {
	Head       string
	NewCommits int
	Rows       int64
	Parts      []schema.Part // the parts this run wrote, oldest first
	FileIDsKey string
	// Resumed is how many commits came from Config.Resume's parts rather
	// than being diffed by this call.
	Resumed int
	// Functions says how the changed functions' file versions were read;
	// zero with NoFunctions or a Config.Diff.Functions of the caller's.
	Functions changes.MapperStats
	// Missing counts the rows of Parts whose blob the clone lacked
	// (schema.CommitFile.Missing).
	Missing int64
}

const (
	defaultCommitsPerPart = 5000
	defaultRowGroupBytes  = 32 << 20
)

// Scrape writes one row per (commit, changed file) for every commit reachable
// from cfg.Head and not from cfg.Prev.Head. Parts get deterministic names, so a
// run that is interrupted and repeated overwrites the same keys; nothing becomes
// visible to readers until the caller publishes a manifest listing the parts.
func Scrape(ctx context.Context, cfg Config) (*Result, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	perPart := cfg.Options.CommitsPerPart
	if perPart <= 0 {
		perPart = defaultCommitsPerPart
	}
	if cfg.Options.MaxDiffBytes > 0 {
		cfg.Diff.MaxDiffBytes = cfg.Options.MaxDiffBytes
	}
	if cfg.RowGroupBytes <= 0 {
		cfg.RowGroupBytes = defaultRowGroupBytes
	}
	head, err := parseHash(cfg.Head)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", cfg.Repo, err)
	}
	var mapper *changes.FunctionMapper
	if cfg.Diff.Functions == nil && !cfg.NoFunctions {
		m := changes.NewFunctionMapper(0)
		m.Verify = cfg.VerifyFunctions
		mapper = m
		// Headers are C or C++ as the graph at head parses them.
		if m.Headers, err = codegraph.HeaderLanguageAt(ctx, cfg.GitDir, cfg.Diff.Backend, head); err != nil {
			return nil, fmt.Errorf("scrape %s: %w", cfg.Repo, err)
		}
		cfg.Diff.Functions, cfg.Diff.Expect = m.Map, m.Expect
	}
	var exclude []gitrepo.Hash
	ids := NewFileIDs()
	if cfg.Prev != nil && cfg.Prev.Head != "" {
		prev, err := parseHash(cfg.Prev.Head)
		if err != nil {
			return nil, fmt.Errorf("scrape %s: manifest head: %w", cfg.Repo, err)
		}
		exclude = append(exclude, prev)
		if cfg.Prev.FileIDs != "" {
			if ids, err = LoadFileIDs(ctx, cfg.Bucket, cfg.Prev.FileIDs); err != nil {
				return nil, fmt.Errorf("scrape %s: %w", cfg.Repo, err)
			}
		}
	}
	list, err := gitrepo.ListCommits(ctx, cfg.GitDir, cfg.Diff.Backend, head, exclude)
	if err != nil {
		return nil, fmt.Errorf("scrape %s: %w", cfg.Repo, err)
	}
	res := &Result{Head: cfg.Head, NewCommits: len(list)}
	base := ""
	if cfg.Prev != nil {
		base = cfg.Prev.Head
	}
	done := 0
	if cfg.Resume != nil {
		resumed, err := resume(ctx, cfg, *cfg.Resume, base, list, perPart)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, err
		case err != nil:
			log.Warn("scrape checkpoint not usable; scraping from the start", "repo", cfg.Repo, "error", err)
		default:
			ids, done, res.Resumed = resumed, cfg.Resume.Commits, cfg.Resume.Commits
			res.Parts, res.Rows = slices.Clone(cfg.Resume.Parts), cfg.Resume.Rows
		}
	}
	log.Info("scrape", "repo", cfg.Repo, "new_commits", len(list), "head", cfg.Head, "resumed_after", done)

	var pw *partWriter
	firstMissing := ""
	emit := func(cd *gitrepo.CommitDiff) error {
		if pw == nil {
			first := done
			last := min(first+perPart, len(list)) - 1
			pw, err = newPartWriter(ctx, cfg, list[first].String(), list[last].String(), last-first+1)
			if err != nil {
				return err
			}
		}
		if err := pw.writeCommit(cfg.Repo, cd, ids); err != nil {
			return err
		}
		done++
		if cfg.Progress != nil {
			cfg.Progress(done, len(list))
		}
		if pw.commits == pw.want {
			if firstMissing == "" {
				firstMissing = pw.firstMissing
			}
			p, err := pw.close()
			if err != nil {
				return err
			}
			res.Parts = append(res.Parts, p)
			res.Rows += p.Rows
			pw = nil
			if cfg.Checkpoint != nil && done < len(list) {
				key := cfg.Repo.FileIDsKey(p.Last)
				if err := writeFileIDs(ctx, cfg.Bucket, key, ids); err != nil {
					return err
				}
				cfg.Checkpoint(Checkpoint{Head: cfg.Head, Base: base, Commits: done, Rows: res.Rows,
					Parts: slices.Clone(res.Parts), FileIDsKey: key})
			}
		}
		return nil
	}
	if err := gitrepo.DiffCommits(ctx, cfg.GitDir, list[done:], cfg.Diff, emit); err != nil {
		if pw != nil {
			pw.abort()
		}
		return nil, fmt.Errorf("scrape %s: %w", cfg.Repo, err)
	}
	if pw != nil { // cannot happen: the last part closes on its last commit
		pw.abort()
		return nil, fmt.Errorf("scrape %s: internal error: part %s left open", cfg.Repo, pw.key)
	}
	if mapper != nil {
		res.Functions = mapper.Stats()
	}
	if res.Missing = schema.MissingRows(res.Parts); res.Missing > 0 {
		// One warning for the repository, not one per blob.
		log.Warn("blobs missing from the clone (a partial clone's filter, or an incomplete mirror): their rows are flagged missing, line counts unknown",
			"repo", cfg.Repo, "rows", res.Missing, "first", firstMissing)
	}
	res.FileIDsKey = cfg.Repo.FileIDsKey(cfg.Head)
	if err := writeFileIDs(ctx, cfg.Bucket, res.FileIDsKey, ids); err != nil {
		return nil, fmt.Errorf("scrape %s: %w", cfg.Repo, err)
	}
	return res, nil
}

func writeFileIDs(ctx context.Context, b *blob.Bucket, key string, ids *FileIDs) error {
	w, err := b.NewWriter(ctx, key)
	if err != nil {
		return err
	}
	if _, err := ids.WriteTo(w); err != nil {
		w.Abort()
		return fmt.Errorf("write %s: %w", key, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", key, err)
	}
	return nil
}

// resume checks that cp continues this scrape (same head and base, whole
// parts holding list's first commits in order, each stored as written) and
// returns the file-id map it recorded.
func resume(ctx context.Context, cfg Config, cp Checkpoint, base string, list []gitrepo.Hash, perPart int) (*FileIDs, error) {
	if cp.Head != cfg.Head || cp.Base != base {
		return nil, fmt.Errorf("checkpoint of %s..%s, this scrape is %s..%s", cp.Base, cp.Head, base, cfg.Head)
	}
	if cp.Commits <= 0 || cp.Commits > len(list) || cp.Commits != len(cp.Parts)*perPart {
		return nil, fmt.Errorf("checkpoint of %d commits in %d parts, this scrape has %d commits at %d per part", cp.Commits, len(cp.Parts), len(list), perPart)
	}
	var rows int64
	for i, p := range cp.Parts {
		first, last := list[i*perPart].String(), list[(i+1)*perPart-1].String()
		if p.First != first || p.Last != last || p.Commits != perPart || p.Key != cfg.Repo.CommitsPartKey(first, last) {
			return nil, fmt.Errorf("checkpoint part %d (%s) does not hold commits %s..%s", i, p.Key, first, last)
		}
		if err := VerifyPart(ctx, cfg.Bucket, p, true); err != nil {
			return nil, err
		}
		rows += p.Rows
	}
	if rows != cp.Rows {
		return nil, fmt.Errorf("checkpoint says %d rows, its parts hold %d", cp.Rows, rows)
	}
	return LoadFileIDs(ctx, cfg.Bucket, cp.FileIDsKey)
}

func parseHash(s string) (gitrepo.Hash, error) {
	var h gitrepo.Hash
	if len(s) != 2*len(h) || strings.ToLower(s) != s {
		return h, fmt.Errorf("commit id %q: want 40 lower-case hex digits", s)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("commit id %q: %w", s, err)
	}
	return h, nil
}

// partWriter streams one Parquet part to the store.
type partWriter struct {
	key     string
	part    schema.Part
	pq      *objio.ParquetWriter[schema.CommitFile]
	rows    []schema.CommitFile
	pending int // bytes buffered in the current row group
	limit   int
	commits int
	want    int
	// firstMissing names the first row whose blob the clone lacked
	// ("commit path"), for the scrape's warning.
	firstMissing string
}

func newPartWriter(ctx context.Context, cfg Config, first, last string, want int) (*partWriter, error) {
	key := cfg.Repo.CommitsPartKey(first, last)
	pq, err := objio.NewParquetWriter[schema.CommitFile](ctx, cfg.Bucket, key,
		objio.Format{Key: "locus.commits_version", Version: schema.CommitsVersion},
		parquet.KeyValueMetadata("locus.repo", string(cfg.Repo)))
	if err != nil {
		return nil, fmt.Errorf("part %s: %w", key, err)
	}
	return &partWriter{key: key, part: schema.Part{Key: key, First: first, Last: last}, pq: pq,
		limit: cfg.RowGroupBytes, want: want}, nil
}

func (p *partWriter) writeCommit(repo schema.RepoName, cd *gitrepo.CommitDiff, ids *FileIDs) error {
	id := cd.ID.String()
	base := schema.CommitFile{
		Repo:       string(repo),
		CommitID:   id,
		NumParents: int32(len(cd.Parents)),
		IsMerge:    len(cd.Parents) > 1,
		AuthorTime: cd.Author.When * 1000,
		CommitTime: cd.Committer.When * 1000,
	}
	if len(cd.Parents) > 0 {
		base.ParentID = cd.Parents[0].String()
	}
	base.AuthorName, base.AuthorNameRaw = textField(cd.Author.Name, cd.Encoding)
	base.AuthorEmail, base.AuthorEmailRaw = textField(cd.Author.Email, cd.Encoding)
	base.Message, base.MessageRaw = textField(cd.Message, cd.Encoding)
	p.rows = p.rows[:0]
	if len(cd.Files) == 0 {
		r := base
		r.Status = schema.StatusEmpty
		p.rows = append(p.rows, r)
	}
	for i := range cd.Files {
		f := &cd.Files[i]
		r := base
		r.Status = f.Status
		r.Path, r.PathRaw = utf8Field(f.Path())
		switch f.Status {
		case schema.StatusRenamed:
			r.PreviousPath, r.PrevPathRaw = utf8Field(f.OldPath)
			r.FileID = ids.Rename(id, string(f.OldPath), string(f.NewPath))
		case schema.StatusAdded:
			r.FileID = ids.Touch(id, string(f.NewPath))
		default:
			r.PreviousPath, r.PrevPathRaw = r.Path, r.PathRaw
			r.FileID = ids.Touch(id, string(f.Path()))
		}
		if f.OldBlob != gitrepo.ZeroHash {
			r.OldBlobID = f.OldBlob.String()
		}
		if f.NewBlob != gitrepo.ZeroHash {
			r.NewBlobID = f.NewBlob.String()
		}
		r.OldMode, r.NewMode = f.OldMode, f.NewMode
		r.Additions, r.Deletions = int32(f.Additions), int32(f.Deletions)
		r.IsBinary, r.Diff, r.DiffTruncated = f.Binary, f.Diff, f.Truncated
		if r.Missing = f.Missing; r.Missing {
			p.part.Missing++
			if p.firstMissing == "" {
				p.firstMissing = id[:12] + " " + r.Path
			}
		}
		r.ChangedFunctions = validIDs(f.ChangedFunctions)
		if ext := strings.ToLower(path.Ext(r.Path)); ext != "." {
			r.Extension = ext
		}
		p.rows = append(p.rows, r)
	}
	if err := p.pq.Write(p.rows); err != nil {
		return fmt.Errorf("part: commit %s: %w", id, err)
	}
	for i := range p.rows {
		p.pending += len(p.rows[i].Diff) + len(p.rows[i].Message) + 200
	}
	p.part.Rows += int64(len(p.rows))
	p.commits++
	p.part.Commits++
	if p.pending >= p.limit {
		if err := p.pq.Flush(); err != nil {
			return fmt.Errorf("part: %w", err)
		}
		p.pending = 0
	}
	return nil
}

func (p *partWriter) close() (schema.Part, error) {
	ref, err := p.pq.Close()
	if err != nil {
		return p.part, fmt.Errorf("part: %w", err)
	}
	p.part.Bytes, p.part.SHA256 = ref.Size, ref.SHA256
	return p.part, nil
}

func (p *partWriter) abort() { p.pq.Abort() }

// utf8Field returns b as a string when it is valid UTF-8; otherwise a lossy
// rendering plus the exact bytes, so nothing is lost.
func utf8Field(b []byte) (string, []byte) {
	if utf8.Valid(b) {
		return string(b), nil
	}
	return schema.ValidUTF8(string(b)), bytes.Clone(b)
}

// textField renders commit text (message, author) as UTF-8 the way `git log`
// does: decoded from the commit's "encoding" header when it names another
// character set. The exact bytes come back too whenever the text differs
// from them. An unknown or undecodable encoding falls back to utf8Field.
func textField(b, charset []byte) (string, []byte) {
	name := strings.ToLower(strings.TrimSpace(string(charset)))
	if name == "" || name == "utf-8" || name == "utf8" {
		return utf8Field(b)
	}
	var enc encoding.Encoding
	switch name {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1":
		// htmlindex maps these to windows-1252, as browsers do; git's iconv does not.
		enc = charmap.ISO8859_1
	default:
		var err error
		if enc, err = htmlindex.Get(name); err != nil {
			return utf8Field(b)
		}
	}
	dec, err := enc.NewDecoder().Bytes(b)
	if err != nil || !utf8.Valid(dec) {
		return utf8Field(b)
	}
	if bytes.Equal(dec, b) {
		return string(dec), nil
	}
	return string(dec), bytes.Clone(b)
}

// validIDs returns ids with every one valid UTF-8, as the graph stores them;
// ids itself when they already are.
func validIDs(ids []string) []string {
	for i, id := range ids {
		if !utf8.ValidString(id) {
			out := slices.Clone(ids)
			for j := i; j < len(out); j++ {
				out[j] = schema.ValidUTF8(out[j])
			}
			return out
		}
	}
	return ids
}
