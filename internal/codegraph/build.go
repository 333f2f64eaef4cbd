package codegraph

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/locus-dev/locus/internal/codegraph/extract"
	"github.com/locus-dev/locus/internal/fileclass"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/schema"
)

// File is one entry of the snapshot to build from.
type File struct {
	Path string // repository-relative, slash-separated
	// Regular is false for symlinks and submodules: they are never followed.
	Regular bool
	// Read returns the content. Builders call it from one goroutine.
	Read func() ([]byte, error)
	// snap and blob: where GitFiles' Read reads from, so that Build can
	// tell the snapshot what it will read (readAhead).
	snap *gitrepo.Snapshot
	blob gitrepo.Hash
}

// DefaultExclude lists the directories whose files are neither parsed into
// graphs nor mapped to changed functions: dependencies and build outputs.
// A bare name is skipped wherever it occurs; one with a leading "/" only at
// the repository's root. "/deps" is where C projects bundle the libraries
// they build with (redis's jemalloc, Lua and hiredis, Node's V8), which
// GitHub's linguist counts as vendored for the same reason (its "^deps/").
var DefaultExclude = []string{".git", "node_modules", "vendor", "third_party", "bower_components",
	"build", "dist", "out", "target", "__pycache__", ".venv", "venv", ".tox", "site-packages", "/deps"}

// Options tune Build.
type Options struct {
	// MaxFileBytes: larger files are skipped ("too large"); default 1 MiB.
	MaxFileBytes int
	// Exclude: directories skipped (DefaultExclude's form); default DefaultExclude.
	Exclude []string
	// Headers, when set, names the language .h files are parsed as
	// ("c" or "cpp"), as a build of the whole tree would decide it
	// (HeaderLanguageAt): for a build of a few of its files; default: by
	// the files given (headerLanguage).
	Headers string
	// PrimaryLanguageOnly keeps only the language with the most parsed bytes,
	// as the SpIDER paper does; default every supported language.
	PrimaryLanguageOnly bool
	// Workers parsing in parallel; default GOMAXPROCS.
	Workers int
	// ParseTimeout bounds tree-sitter's parse of one file; a file that takes
	// longer is skipped ("parse timed out"); default DefaultParseTimeout.
	ParseTimeout time.Duration
	// Reuse holds extraction results of an earlier build: a file whose
	// path, language and content are there is not parsed again. Building
	// with them gives the graph a build without them gives.
	Reuse *Extracts
	// KeepExtracts makes Build return the extraction result of every file
	// it put in the graph (Graph.Extracts), for the next build's Reuse.
	KeepExtracts bool
}

// Extracts are files' extraction results by path, language and content.
type Extracts struct {
	// Version is schema.ExtractVersion when they were made; others are not used.
	Version int
	Files   map[string][]byte // extractKey → gob of a FileResult
}

// extractKey names a file's extraction: its path, language and content.
func extractKey(path, lang string, src []byte) string {
	h := sha256.New()
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write([]byte(lang))
	h.Write([]byte{0})
	h.Write(src)
	return hex.EncodeToString(h.Sum(nil)[:20])
}

// reused is the kept extraction of key, decoded afresh (the builder may
// change what it is given); nil when there is none.
func (e *Extracts) reused(key string) *FileResult {
	if e == nil || e.Version != schema.ExtractVersion {
		return nil
	}
	data, ok := e.Files[key]
	if !ok {
		return nil
	}
	var r FileResult
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&r) != nil {
		return nil // parsed again
	}
	return &r
}

// errExtractor marks an extractor's internal error (a recovered panic):
// Build skips the file with it as the reason.
var errExtractor = extract.ErrExtractor

// safeExtract runs l's extractor, turning a panic into errExtractor.
func safeExtract(ctx context.Context, l Language, path string, src []byte) (res *FileResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("extract %s %s: %w: %v", l.Name(), path, errExtractor, r)
		}
	}()
	return l.Extract(ctx, path, src)
}

// DefaultParseTimeout is Options.ParseTimeout's default: far above what any
// file under MaxFileBytes takes (a 1 MiB C++ file parses in about a second),
// so that only a pathological input reaches it.
const DefaultParseTimeout = 30 * time.Second

func (o *Options) defaults() {
	if o.ParseTimeout <= 0 {
		o.ParseTimeout = DefaultParseTimeout
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 1 << 20
	}
	if o.Exclude == nil {
		o.Exclude = DefaultExclude
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// parsed is one file that went through an extractor.
type parsed struct {
	path string
	lang Language
	// text is the file's content, and src its bytes (readOnly).
	text string
	src  []byte
	res  *FileResult
	// key is the extraction's key (extractKey), where Build made one.
	key string
	// What buildNodes needs from the source alone, computed by the
	// extraction workers (prepare): the file node's line count, code and
	// hash, and each definition's code and hash.
	lines              int
	fileCode, fileHash string
	defCode, defHash   []string
	// Each definition's node id, its name with overload signatures and
	// "#n" suffixes dropped from every segment, and that name's last
	// segment; defParent is the index of the innermost enclosing
	// definition, -1 where the file holds it.
	defID, defKey, defLast []string
	defParent              []int32
	// defIndex is each definition's index by its qualified name.
	defIndex map[string]int32
	// pkgKey is packageKey's, made once.
	pkgKey string
	// scopesOf and scopesCache: the last definition scopes was asked
	// for, and its answer; scopesNorm holds each scope's normQual where
	// a name can be joined to it after normalising (joinsAtDot), else "".
	scopesOf                string
	scopesCache, scopesNorm []string
	// maps: what name resolution reads for this file (builder.mapsOf).
	maps *fileMaps
}

// prepare computes the code and content hashes of the file's nodes, and
// its package key.
func (p *parsed) prepare() {
	p.pkgKey = packageKey(p)
	if len(p.res.Defs) == 0 {
		return // a file gets a node only if it defines something
	}
	p.lines = bytes.Count(p.src, []byte("\n"))
	if len(p.src) > 0 && p.src[len(p.src)-1] != '\n' {
		p.lines++
	}
	p.names()
	p.defCode = make([]string, len(p.res.Defs))
	p.defHash = make([]string, len(p.res.Defs))
	// Valid text cut at line ends stays valid: each definition's code is
	// then a part of the file's one copy, and is hashed where it lies.
	valid := utf8.Valid(p.src)
	if valid {
		p.fileCode, p.fileHash = p.text, hashBytes(p.src)
	} else {
		p.fileCode = validUTF8(p.src)
		p.fileHash = contentHash(p.fileCode)
	}
	for i, d := range p.res.Defs {
		start, end := lineBounds(p.src, d.StartByte, d.EndByte)
		if valid {
			p.defCode[i], p.defHash[i] = p.fileCode[start:end], hashBytes(p.src[start:end])
		} else {
			p.defCode[i] = validUTF8(p.src[start:end])
			p.defHash[i] = contentHash(p.defCode[i])
		}
	}
}

// names fills defIndex, defID, defParent, defKey and defLast.
func (p *parsed) names() {
	defs := p.res.Defs
	p.defID, p.defParent = make([]string, len(defs)), make([]int32, len(defs))
	p.defKey, p.defLast = make([]string, len(defs)), make([]string, len(defs))
	index := make(map[string]int32, len(defs))
	for i, d := range defs {
		index[d.Name] = int32(i)
		p.defID[i] = EntityID(p.path, d.Name)
	}
	p.defIndex = index
	for i, d := range defs {
		p.defParent[i] = -1
		for _, q := range enclosing(d.Name)[1:] {
			if j, ok := index[q]; ok {
				p.defParent[i] = j
				break
			}
		}
		p.defKey[i] = normQual(d.Name)
		p.defLast[i] = SimpleName(d.Name)
	}
}

// Build parses the files and returns the graph with every edge it could resolve.
func Build(ctx context.Context, files []File, opts Options) (*Graph, error) {
	opts.defaults()
	g := &Graph{Stats: Stats{FilesByLang: map[string]int{}, CodeBytes: map[string]int64{}, Edges: map[string]int{}, Unresolved: map[string]int{}}}
	excluded := excludeSet(opts.Exclude)

	type job struct {
		i int
		p parsed
	}
	var out []*parsed
	var slots []string        // the path of each slot of out
	skips := map[int]string{} // by slot: files a worker gave up on
	jobs := make(chan *job)
	var wg sync.WaitGroup
	var firstErr error
	var mu sync.Mutex
	var kept map[string][]byte
	if opts.KeepExtracts {
		kept = map[string][]byte{}
	}
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				// The key hashes the whole file: only made where it is used.
				var key string
				if opts.Reuse != nil || kept != nil {
					key = extractKey(j.p.path, j.p.lang.Name(), j.p.src)
				}
				var err error
				res := opts.Reuse.reused(key)
				reused := res != nil
				if !reused {
					fctx, cancel := context.WithTimeout(ctx, opts.ParseTimeout)
					// src is the bytes of the file's one string, never
					// changed: the names the extractor reads are its parts.
					fctx = extract.WithStableSource(fctx, j.p.text)
					res, err = safeExtract(fctx, j.p.lang, j.p.path, j.p.src)
					cancel()
				}
				var enc []byte
				if reused && kept != nil {
					enc = opts.Reuse.Files[key] // as kept: no need to encode it again
				} else if err == nil && kept != nil {
					var buf bytes.Buffer
					if err = gob.NewEncoder(&buf).Encode(res); err != nil {
						err = fmt.Errorf("keep the extraction: %w", err)
					}
					enc = buf.Bytes()
				}
				var p parsed
				if err == nil {
					p = j.p
					p.res, p.key = res, key
					p.prepare()
				}
				mu.Lock()
				switch {
				case err != nil && errors.Is(err, ErrParseTimeout) && ctx.Err() == nil:
					skips[j.i] = fmt.Sprintf("parse timed out (over %s)", opts.ParseTimeout)
				case err != nil && errors.Is(err, errExtractor) && ctx.Err() == nil:
					// An extractor's bug costs the file, named, not the graph.
					skips[j.i] = err.Error()
				case err != nil && firstErr == nil:
					firstErr = fmt.Errorf("%s: %w", j.p.path, err)
				case err == nil:
					out[j.i] = &p
					if reused {
						g.Stats.Reused++
					}
					if kept != nil {
						kept[key] = enc
					}
				}
				mu.Unlock()
			}
		}()
	}
	hdr := headerLanguage(files, excluded)
	if opts.Headers != "" {
		if l := LanguageNamed(opts.Headers); l != nil {
			hdr = l
		} else {
			return nil, fmt.Errorf("build: header language %q is not one the graph parses", opts.Headers)
		}
	}
	// Which files are read is known from their paths: the snapshot is told
	// first, so that it looks them up ahead of the reads.
	type entry struct {
		name, skip string
		lang       Language
		supported  bool
	}
	entries := make([]entry, len(files))
	var toRead []File
	for i, f := range files {
		name, supported := DetectLanguage(f.Path)
		lang := LanguageFor(f.Path)
		if supported && IsHeader(f.Path) {
			name, lang = hdr.Name(), hdr
		}
		read := name
		if !supported && fileclass.MayBeProgramming(f.Path) {
			// Read for its bytes; its language is told from its content
			// (codeLanguage).
			read = "?"
		}
		entries[i] = entry{name, skipPath(f, excluded, read, supported), lang, supported}
		if entries[i].skip == "" {
			toRead = append(toRead, f)
		}
	}
	readAhead(toRead)
	for i, f := range files {
		name, lang, supported := entries[i].name, entries[i].lang, entries[i].supported
		if reason := entries[i].skip; reason != "" {
			if reason != "-" {
				g.Stats.Skipped = append(g.Stats.Skipped, Skipped{f.Path, reason})
			}
			continue
		}
		data, err := f.Read()
		if gitrepo.IsMissingObject(err) {
			// A partial clone's filter or an incomplete mirror: the file
			// is named, the graph built without it.
			g.Stats.Skipped = append(g.Stats.Skipped, Skipped{f.Path, SkipMissingBlob})
			g.Stats.Missing++
			continue
		}
		if err != nil {
			close(jobs)
			wg.Wait()
			return nil, fmt.Errorf("read %s: %w", f.Path, err)
		}
		reason, code := skipContent(data, opts.MaxFileBytes)
		if !supported {
			name = codeLanguage(f.Path, data)
		}
		if code && name != "" && !fileclass.IsVendor(f.Path) && !fileclass.IsGenerated(f.Path, data) {
			g.Stats.CodeBytes[name] += int64(len(data))
		}
		if !supported {
			continue
		}
		if reason != "" {
			g.Stats.Skipped = append(g.Stats.Skipped, Skipped{f.Path, reason})
			continue
		}
		mu.Lock()
		out, slots = append(out, nil), append(slots, f.Path)
		// One copy of the file (Read may reuse its buffer), kept as the
		// file node's code and read by the extractor without another.
		text := string(data)
		j := &job{i: len(out) - 1, p: parsed{path: f.Path, lang: lang, text: text, src: readOnly(text)}}
		mu.Unlock()
		select {
		case jobs <- j:
		case <-ctx.Done():
			close(jobs)
			wg.Wait()
			return nil, ctx.Err()
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	for i, f := range out {
		if f == nil && skips[i] != "" {
			g.Stats.Skipped = append(g.Stats.Skipped, Skipped{slots[i], skips[i]})
		}
	}
	var all []*parsed
	for _, p := range out {
		if p != nil {
			all = append(all, p)
		}
	}
	if opts.PrimaryLanguageOnly {
		all = keepPrimary(all, &g.Stats)
	}
	b := newBuilder(g, all)
	b.workers = opts.Workers
	b.buildNodes()
	b.rankNodes()
	b.resolve()
	b.finish()
	g.codeHashed = true // prepare hashed each node's code
	if kept != nil {
		// Only the files the graph holds (not another language's, with
		// PrimaryLanguageOnly).
		in := make(map[string]bool, len(all))
		for _, p := range all {
			in[p.key] = true
		}
		for k := range kept {
			if !in[k] {
				delete(kept, k)
			}
		}
		g.Extracts = &Extracts{Version: schema.ExtractVersion, Files: kept}
	}
	return g, nil
}

// Excluded reports whether path (repository-relative, slash-separated)
// lies in a directory that exclude names, in DefaultExclude's form.
func Excluded(path string, exclude []string) bool {
	return inExcluded(path, excludeSet(exclude))
}

func inExcluded(path string, excluded map[string]bool) bool {
	segs := strings.Split(path, "/")
	for i, s := range segs[:len(segs)-1] {
		if excluded[s] || i == 0 && excluded["/"+s] {
			return true
		}
	}
	return false
}

// excludeSet is a set of the directory names in list (Options.Exclude).
func excludeSet(list []string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, e := range list {
		set[e] = true
	}
	return set
}

// skipPath returns why a file is not parsed: "-" for files that are simply not
// source in a programming language (not reported) or are in one without a
// graph (read for their bytes only), a reason otherwise.
func skipPath(f File, excluded map[string]bool, lang string, supported bool) string {
	if inExcluded(f.Path, excluded) {
		return "-"
	}
	if lang == "" {
		return "-"
	}
	if !f.Regular {
		if !supported {
			return "-"
		}
		return "symlink or submodule (not followed)"
	}
	if !isLocalPath(f.Path) {
		return "path escapes the repository"
	}
	return ""
}

func isLocalPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.Contains(p, "\\") {
		return false
	}
	for _, s := range strings.Split(p, "/") {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	return true
}

// skipContent returns why content is not parsed: too large, binary
// (fileclass.IsBinary), minified or generated (fileclass.HasGeneratedMarker);
// code is whether it may count as code in language statistics (as
// linguist's: not binary, minified or generated; Build also leaves out
// what fileclass calls vendored or generated).
func skipContent(data []byte, max int) (reason string, code bool) {
	return skipContentOf(data, max, func() bool { return isMinified(data) })
}

// skipContentOf is skipContent asking minified whether data is minified.
func skipContentOf(data []byte, max int, minified func() bool) (reason string, code bool) {
	switch {
	case fileclass.IsBinary(data):
		return "binary", false
	case minified():
		return "minified", false
	case fileclass.HasGeneratedMarker(data):
		return "generated", false
	case len(data) > max:
		return fmt.Sprintf("too large (%d bytes > %d)", len(data), max), true
	}
	return "", true
}

// headerLanguage is how a repository's .h files are parsed: as C++ when the
// repository has more C++ source files than C ones (headers aside, excluded
// directories too), else as C. By files, not bytes, so that the history
// scrape can decide it from a tree listing alone (HeaderLanguageAt).
func headerLanguage(files []File, excluded map[string]bool) Language {
	n := map[string]int{}
	for _, f := range files {
		if l := LanguageFor(f.Path); l != nil && !IsHeader(f.Path) && skipPath(f, excluded, l.Name(), true) == "" {
			n[l.Name()]++
		}
	}
	regMu.RLock()
	defer regMu.RUnlock()
	if cpp := byName["cpp"]; cpp != nil && n["cpp"] > n["c"] {
		return cpp
	}
	return byExt[headerExt]
}

// isMinified: long lines that no person writes. Indentation is not
// counted: a deeply indented file (Python nested forty blocks deep) has
// long lines of few characters, and a person wrote them.
func isMinified(data []byte) bool {
	if len(data) < 2000 {
		return false
	}
	lines, content, longest := 1, 0, 0
	for rest := data; ; lines++ {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			n := unindentedLen(rest)
			content, longest = content+n, max(longest, n)
			break
		}
		n := unindentedLen(rest[:i])
		content, longest = content+n, max(longest, n)
		rest = rest[i+1:]
	}
	return minifiedBy(len(data), content, lines, longest)
}

// unindentedLen is the length of line after its leading spaces and tabs.
func unindentedLen(line []byte) int { return len(bytes.TrimLeft(line, " \t")) }

// minifiedBy: a text of size bytes in lines lines, content of them not
// indentation, the longest that long (without its newline and indentation),
// is minified when lines average over 300 bytes of content or one passes
// 10,000.
func minifiedBy(size, content, lines, longest int) bool {
	return size >= 2000 && (content/lines > 300 || longest > 10000)
}

func keepPrimary(all []*parsed, st *Stats) []*parsed {
	bytesBy := map[string]int{}
	for _, p := range all {
		bytesBy[p.lang.Name()] += len(p.src)
	}
	best := ""
	for l, n := range bytesBy {
		if n > bytesBy[best] || n == bytesBy[best] && l < best {
			best = l
		}
	}
	var out []*parsed
	for _, p := range all {
		if p.lang.Name() == best {
			out = append(out, p)
		} else {
			st.Skipped = append(st.Skipped, Skipped{p.path, "not the primary language (" + best + ")"})
		}
	}
	return out
}

func contentHash(s string) string { return hashBytes([]byte(s)) }

// hashBytes is contentHash of b's text.
func hashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// readOnly returns s's bytes without a copy; they must never be modified.
func readOnly(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// validUTF8 keeps node code storable as a Parquet string.
func validUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// EntityID is the id of a class or function: "<file path>:<qualified name>".
func EntityID(file, name string) string { return file + ":" + name }

// SplitID is EntityID's inverse: the file path and qualified name of id
// (a file's id is its path, with no name).
func SplitID(id string) (file, name string) {
	file, name, _ = strings.Cut(id, ":")
	return file, name
}

// splitQual splits a qualified name at dots outside brackets and parentheses
// ("C.m(a.B)" → C, m(a.B); "A.[Symbol.iterator]" → A, [Symbol.iterator]).
func splitQual(name string) []string {
	return appendQual(make([]string, 0, strings.Count(name, ".")+1), name)
}

// appendQual appends name's parts (splitQual) to parts: with a caller's
// array behind parts, splitting allocates nothing.
func appendQual(parts []string, name string) []string {
	depth, start := 0, 0
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '(', '[', '<':
			depth++
		case ')', ']', '>':
			depth--
		case '.':
			if depth == 0 {
				parts = append(parts, name[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, name[start:])
}

// SimpleName is a qualified name's last segment without an overload
// signature or a "#n" suffix: "A.B.f(int)#2" → "f".
func SimpleName(q string) string {
	var buf [8]string
	parts := appendQual(buf[:0], q)
	return baseName(parts[len(parts)-1])
}

// firstQual is splitQual(name)[0], without allocating.
func firstQual(name string) string {
	var buf [8]string
	return appendQual(buf[:0], name)[0]
}

// baseName strips an overload signature and a duplicate suffix: "m(int)#2" → "m".
func baseName(seg string) string {
	// "#2" after at least one character; a leading '#' is a JS private name.
	if i := strings.LastIndexByte(seg, '#'); i > 0 && isDigits(seg[i+1:]) {
		seg = seg[:i]
	}
	if i := strings.IndexByte(seg, '('); i > 0 {
		seg = seg[:i]
	}
	return seg
}

func dirOf(p string) string {
	d := path.Dir(p)
	if d == "." {
		return RootID
	}
	return d
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
