// Package changes maps the line changes of a commit's files onto the
// functions they touch, as graph ids (FunctionMapper, the history scrape's
// changed functions). It reads file versions with codegraph's extractors
// and, next to a version it knows, derives the other without parsing it
// whole where the change allows (spanderive.go).
package changes

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/extract"
	"github.com/locus-dev/locus/internal/gitrepo"
)

// FunctionMapper maps file changes onto functions (the gitrepo
// DiffOptions.Functions hook). It remembers the functions of recent file
// versions by (path, blob), since the new version of a file in one commit is
// usually the old version in the next commit that touches it, and it finds
// the functions of a version next to a remembered one without parsing the
// whole file where it can (derive). Safe for concurrent use.
type FunctionMapper struct {
	mu    sync.Mutex
	cache map[spanKey]*versionSpans
	order []spanKey // insertion order, for eviction
	max   int
	// bytes is what the remembered versions hold (versionSpans.size), at
	// most maxBytes: a C header's versions hold thousands of members each.
	bytes, maxBytes int
	// pending are the versions some goroutine is finding now; a change
	// that needs one waits for it instead of parsing it a second time (the
	// next commit's old version is often this commit's new one, and the
	// two commits are diffed side by side).
	pending map[spanKey]*pendingVersion
	expects int64 // Expect calls so far
	// Exclude names the directories whose files map to no functions, as
	// the graph leaves them out (Options.Exclude); default DefaultExclude.
	// Set it before the first Map.
	Exclude  []string
	excluded func() func(string) bool // Exclude as a matcher, made once
	// Headers is the language .h files are parsed as, "c" or "cpp", as the
	// repository's graph does (HeaderLanguageAt); default "c".
	Headers string
	// Verify also parses every derived version whole and counts the
	// versions where the two readings differ (MapperStats.Mismatched); the
	// whole parse is then the one used. For benchmarks and tests: it costs
	// what deriving saves.
	Verify bool
	// whole parses every version whole, as before derivation (tests).
	whole bool

	cached, parsed, skeleton, bodies, members, verified, mismatched, recovered atomic.Int64
	spent                                                                      [4]atomic.Int64 // ns per derivation kind
	firstMismatches, firstRecovered                                            []string        // under mu
}

// deriveVersion is derive; tests replace it to make a derivation fail.
var deriveVersion = derive

type spanKey struct {
	path string
	blob gitrepo.Hash
}

// MapperStats counts how a FunctionMapper found the functions of the file
// versions it was asked about.
type MapperStats struct {
	Cached int64 // remembered from an earlier change
	Parsed int64 // the whole file parsed
	// Skeleton: parsed with the bodies that did not change left out (their
	// braces kept), next to a remembered version.
	Skeleton int64
	// Bodies: every change lay inside function bodies, and only the changed
	// bodies were parsed.
	Bodies int64
	// Members: every change lay inside function bodies or in runs of
	// members between definitions (imports, fields, comments), and only
	// those were parsed.
	Members int64
	// Verified and Mismatched count derived versions checked against a
	// whole parse, with Verify; Mismatches describes the first few.
	Verified, Mismatched int64
	Mismatches           []string
	// Recovered counts derivations that panicked (a bug in deriving, not
	// in the input) and were parsed whole instead, so that one file version
	// costs a parse, not the scrape; RecoveredFrom describes the first few.
	Recovered     int64
	RecoveredFrom []string
	// ParseTime, SkeletonTime, BodiesTime and MembersTime are the time
	// spent finding versions each way (summed over goroutines; derivations
	// that fell back to a whole parse count as parsed).
	ParseTime, SkeletonTime, BodiesTime, MembersTime time.Duration
}

// Stats reports the counts so far.
func (m *FunctionMapper) Stats() MapperStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MapperStats{Cached: m.cached.Load(), Parsed: m.parsed.Load(), Skeleton: m.skeleton.Load(),
		Bodies: m.bodies.Load(), Members: m.members.Load(), Verified: m.verified.Load(), Mismatched: m.mismatched.Load(),
		Mismatches: append([]string(nil), m.firstMismatches...),
		Recovered:  m.recovered.Load(), RecoveredFrom: append([]string(nil), m.firstRecovered...),
		ParseTime: time.Duration(m.spent[derivedParsed].Load()), SkeletonTime: time.Duration(m.spent[derivedSkeleton].Load()),
		BodiesTime: time.Duration(m.spent[derivedBodies].Load()), MembersTime: time.Duration(m.spent[derivedMembers].Load())}
}

// NewFunctionMapper keeps the functions of up to size file versions
// (default 20,000: enough for the other version of most changes), and of
// at most 128 MiB of them (versionSpans.size): kafka's 20,000 versions hold
// about 85 MiB, redis's 20,000 about 240 MiB, where 10,000 lose 0.3% of the
// versions found remembered.
func NewFunctionMapper(size int) *FunctionMapper {
	if size <= 0 {
		size = 20000
	}
	m := &FunctionMapper{cache: map[spanKey]*versionSpans{}, pending: map[spanKey]*pendingVersion{}, max: size,
		maxBytes: 128 << 20}
	m.excluded = sync.OnceValue(func() func(string) bool {
		if m.Exclude == nil {
			return codegraph.Excluder(codegraph.DefaultExclude)
		}
		return codegraph.Excluder(m.Exclude)
	})
	return m
}

func (m *FunctionMapper) language(path string) extract.Language {
	if path == "" {
		return nil
	}
	if m.excluded()(path) {
		return nil
	}
	if m.Headers != "" && codegraph.IsHeader(path) {
		return codegraph.LanguageNamed(m.Headers)
	}
	return codegraph.LanguageFor(path)
}

// pendingVersion is a version some goroutine is finding: by (a Map with)
// an expectation, or by a Map without one when by is nil.
type pendingVersion struct {
	done chan struct{}
	by   *expectation
}

// expectation is one commit's claim on the versions it will find
// (Expect). Commits expect in their order, so seq orders them.
type expectation struct {
	seq  int64
	keys []spanKey // claimed, maybe released since
}

// Expect claims, for one commit (gitrepo.DiffOptions.Expect), the versions
// in vs that are neither remembered nor being found: its Map calls find
// them, and the Map calls of later commits wait for them rather than
// finding them too. Called in commit order.
func (m *FunctionMapper) Expect(vs []gitrepo.Version) (any, func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expects++
	e := &expectation{seq: m.expects}
	for _, v := range vs {
		k := spanKey{v.Path, v.Blob}
		if m.cache[k] != nil || m.pending[k] != nil || m.language(v.Path) == nil {
			continue
		}
		m.pending[k] = &pendingVersion{done: make(chan struct{}), by: e}
		e.keys = append(e.keys, k)
	}
	return e, func() { m.release(e, e.keys) }
}

// release ends e's claims on keys (a nil e: the claims of a Map without
// an expectation).
func (m *FunctionMapper) release(e *expectation, keys []spanKey) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		if p := m.pending[k]; p != nil && p.by == e {
			delete(m.pending, k)
			close(p.done)
		}
	}
}

// claim finds the sides remembered, waiting for any that another goroutine
// is finding, and marks the others as being found by the caller until it
// calls the returned release. Without an expectation (e nil) a goroutine
// waits only while it has claimed nothing; with one, it waits only for
// versions an earlier commit claimed, and finds a version a later commit
// claimed itself, so no two wait for each other either way.
func (m *FunctionMapper) claim(e *expectation, sides ...*side) (release func()) {
	unknown := func(s *side) bool { return s.lang != nil && s.text.text != nil && s.v == nil }
	m.mu.Lock()
	for {
		var busy chan struct{}
		for _, s := range sides {
			if !unknown(s) {
				continue
			}
			k := spanKey{s.path, s.blob}
			if v := m.cache[k]; v != nil {
				s.v = v
				m.cached.Add(1)
			} else if p := m.pending[k]; p != nil && (e == nil || p.by == nil || p.by.seq < e.seq) {
				busy = p.done
			}
		}
		if busy == nil {
			break
		}
		m.mu.Unlock()
		<-busy
		m.mu.Lock()
	}
	var mine []spanKey
	for _, s := range sides {
		if !unknown(s) {
			continue
		}
		k := spanKey{s.path, s.blob}
		switch p := m.pending[k]; {
		case p == nil:
			m.pending[k] = &pendingVersion{done: make(chan struct{}), by: e}
			mine = append(mine, k)
		case e != nil && p.by == e: // claimed by the commit's Expect
			mine = append(mine, k)
		}
	}
	m.mu.Unlock()
	return func() { m.release(e, mine) }
}

func (m *FunctionMapper) remember(path string, blob gitrepo.Hash, v *versionSpans) {
	k := spanKey{path, blob}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.cache[k]; ok {
		return
	}
	m.cache[k] = v
	m.order = append(m.order, k)
	m.bytes += v.size()
	for len(m.order) > m.max || m.bytes > m.maxBytes && len(m.order) > 1 {
		m.bytes -= m.cache[m.order[0]].size()
		delete(m.cache, m.order[0])
		m.order = m.order[1:]
	}
}

// side is one version of a changed file.
type side struct {
	lang    extract.Language
	path    string
	blob    gitrepo.Hash
	text    *textLines
	changed []int // its changed lines, 1-based: deleted (old) or added (new)
	v       *versionSpans
}

// resolve finds s's functions, unless Map found them remembered: derived
// from other (the other version of the change, when known), or parsed.
func (m *FunctionMapper) resolve(s, other *side) {
	if s.lang == nil || s.text.text == nil || s.v != nil {
		return
	}
	ctx := context.Background()
	start := time.Now()
	how := derivedParsed
	if codegraph.SkipReason(s.text.text, 1<<20, s.text.minified) != "" {
		s.v = &versionSpans{}
	} else if other != nil && other.v != nil && other.v.derivable() && other.lang.Name() == s.lang.Name() && !m.whole {
		s.v, how = m.derive(ctx, s, other)
		switch how {
		case derivedBodies:
			m.bodies.Add(1)
		case derivedMembers:
			m.members.Add(1)
		case derivedSkeleton:
			m.skeleton.Add(1)
		default:
			m.parsed.Add(1)
		}
	} else {
		s.v = parseSpans(ctx, s.lang, s.path, s.text.text)
		m.parsed.Add(1)
	}
	m.spent[how].Add(int64(time.Since(start)))
	if m.Verify && how != derivedParsed {
		m.verify(ctx, s, how)
	}
	m.remember(s.path, s.blob, s.v)
}

// derive derives s's functions from other's. A derivation that panics is
// a bug in deriving; the version is then parsed whole, and the panic
// counted (MapperStats.Recovered) and logged.
func (m *FunctionMapper) derive(ctx context.Context, s, other *side) (v *versionSpans, how derivation) {
	defer func() {
		if r := recover(); r != nil {
			m.recovered.Add(1)
			msg := fmt.Sprintf("%s@%s from %s@%s: %v", s.path, s.blob, other.path, other.blob, r)
			slog.Warn("deriving a file version's functions failed; parsed whole", "version", msg)
			m.mu.Lock()
			if len(m.firstRecovered) < 10 {
				m.firstRecovered = append(m.firstRecovered, msg)
			}
			m.mu.Unlock()
			v, how = parseSpans(ctx, s.lang, s.path, s.text.text), derivedParsed
		}
	}()
	return deriveVersion(ctx, s.lang, s.path, other.v, other.text, s.text, other.changed, s.changed)
}

func (m *FunctionMapper) verify(ctx context.Context, s *side, how derivation) {
	want := parseSpans(ctx, s.lang, s.path, s.text.text)
	m.verified.Add(1)
	if diff := want.diff(s.v); diff != "" {
		m.mismatched.Add(1)
		m.mu.Lock()
		if len(m.firstMismatches) < 10 {
			m.firstMismatches = append(m.firstMismatches, fmt.Sprintf("%s@%s (%s): %s", s.path, s.blob, how, diff))
		}
		m.mu.Unlock()
		s.v = want
	}
}

// Map maps one file change: deleted lines and insertions onto the old
// version's functions, added lines onto the new version's, each charged to
// the outermost function around it.
func (m *FunctionMapper) Map(lc *gitrepo.LineChanges) []string {
	old := &side{lang: m.language(lc.OldPath), path: lc.OldPath, blob: lc.OldBlob, text: linesOf(lc.Old, lc.OldLines), changed: lc.Deleted}
	nw := &side{lang: m.language(lc.NewPath), path: lc.NewPath, blob: lc.NewBlob, text: linesOf(lc.New, lc.NewLines), changed: lc.Added}
	e, _ := lc.Claim.(*expectation)
	defer m.claim(e, old, nw)()
	// The side already known (or, with neither, the old one) is found
	// first, so the other can be derived from it.
	if old.v == nil && nw.v != nil {
		m.resolve(old, nw)
	} else {
		m.resolve(old, nil)
		m.resolve(nw, old)
	}
	set := map[string]bool{}
	if old.v != nil {
		for _, l := range lc.Deleted {
			old.v.charge(set, old.path, func(f *fnSpan) bool { return int(f.start) <= l && l <= int(f.end) })
		}
		for _, k := range lc.InsertedAfter {
			old.v.charge(set, old.path, func(f *fnSpan) bool { return int(f.start) <= k && k+1 <= int(f.end) })
		}
	}
	if nw.v != nil {
		for _, l := range lc.Added {
			nw.v.charge(set, nw.path, func(f *fnSpan) bool { return int(f.start) <= l && l <= int(f.end) })
		}
	}
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// charge adds the id of the outermost (widest; the first of equals)
// function matching contains.
func (v *versionSpans) charge(set map[string]bool, path string, contains func(*fnSpan) bool) {
	best := -1
	for i := range v.fns {
		f := &v.fns[i]
		if contains(f) && (best < 0 || f.end-f.start > v.fns[best].end-v.fns[best].start) {
			best = i
		}
	}
	if best >= 0 {
		set[codegraph.EntityID(path, v.fns[best].name)] = true
	}
}

// point is a place in a file: 0-based row, byte column.
type point struct{ row, col int32 }

// fnSpan is one function of a file version as the mapper keeps it.
type fnSpan struct {
	name       string
	start, end int32 // 1-based lines, inclusive
	// open and close are the body's `{` and `}`; open.row < 0 when the
	// function has no braced body.
	open, close point
	// leaf: no definition or declaration starts inside the body, so the
	// body can be left out of a parse without changing any name.
	leaf bool
}

// versionSpans are the functions of one file version, in definition order.
type versionSpans struct {
	fns []fnSpan
	// containers and members are the file's member structure
	// (spanmembers.go); nil where it was not read.
	containers []container
	members    []member
	// clean: read without syntax errors. Other versions are derived from a
	// clean one; from one with errors (at lines errs) only by reading
	// bodies or members away from every error, and never when the
	// extractor read it again another way (reread).
	clean  bool
	errs   [][2]int32
	reread bool
	// classes are the names of C's structs and unions in the file, without
	// their numbers (cRunNames); nil in other languages.
	classes []string
}

// size estimates the bytes v holds.
func (v *versionSpans) size() int {
	const fn, mem, cont, err = int(unsafe.Sizeof(fnSpan{})), int(unsafe.Sizeof(member{})), int(unsafe.Sizeof(container{})), 8
	n := int(unsafe.Sizeof(*v)) + len(v.fns)*fn + len(v.members)*mem + len(v.containers)*cont + len(v.errs)*err
	for _, f := range v.fns {
		n += len(f.name)
	}
	for _, c := range v.classes {
		n += 16 + len(c)
	}
	return n
}

// derivable reports whether other versions may be derived from v.
func (v *versionSpans) derivable() bool {
	return v.clean || !v.reread && v.members != nil
}

// diff describes the first difference between v and o; "" when equal.
func (v *versionSpans) diff(o *versionSpans) string {
	if v.clean != o.clean || v.reread != o.reread || fmt.Sprint(v.errs) != fmt.Sprint(o.errs) {
		return fmt.Sprintf("clean %v, reread %v, errors at %v; derived %v, %v, %v", v.clean, v.reread, v.errs, o.clean, o.reread, o.errs)
	}
	if len(v.fns) != len(o.fns) {
		return fmt.Sprintf("%d functions, derived %d", len(v.fns), len(o.fns))
	}
	if !slices.Equal(v.classes, o.classes) {
		return fmt.Sprintf("structs %q, derived %q", v.classes, o.classes)
	}
	for i := range v.fns {
		if v.fns[i] != o.fns[i] {
			return fmt.Sprintf("function %d is %+v, derived %+v", i, v.fns[i], o.fns[i])
		}
	}
	if len(v.containers) != len(o.containers) || len(v.members) != len(o.members) {
		return fmt.Sprintf("%d containers and %d members, derived %d and %d", len(v.containers), len(v.members), len(o.containers), len(o.members))
	}
	for i := range v.containers {
		if v.containers[i] != o.containers[i] {
			return fmt.Sprintf("container %d is %+v, derived %+v", i, v.containers[i], o.containers[i])
		}
	}
	for i := range v.members {
		if v.members[i] != o.members[i] {
			return fmt.Sprintf("member %d is %+v, derived %+v", i, v.members[i], o.members[i])
		}
	}
	return ""
}

// parseSpans reads a whole file version.
func parseSpans(ctx context.Context, lang extract.Language, path string, src []byte) *versionSpans {
	v, _ := readSpans(ctx, lang, path, src)
	if v == nil {
		return &versionSpans{}
	}
	return v
}

// readSpans extracts src and keeps its functions and members; nil when
// extraction fails.
func readSpans(ctx context.Context, lang extract.Language, path string, src []byte) (*versionSpans, *extract.FileResult) {
	var sink *extract.MemberSink
	if _, ok := bodyWrappers[lang.Name()]; ok { // only what derive reads
		ctx, sink = extract.WithMembers(ctx)
	}
	res, err := lang.Extract(ctx, path, src)
	if err != nil {
		return nil, nil
	}
	return spansOf(res, extract.NewLineIndex(src), sink, lang.Name() != "c"), res
}

// spansOf keeps res's functions, and the members sink holds; lines indexes
// the text res was read from. declsName says whether a declaration can
// change a name: not in C, where a prototype names nothing (NAMING.md), so
// a member holding only prototypes is no definition (member.def).
func spansOf(res *extract.FileResult, lines lineIndex, sink *extract.MemberSink, declsName bool) *versionSpans {
	starts := make([]int, 0, len(res.Defs)+len(res.DeclOffsets()))
	for _, d := range res.Defs {
		starts = append(starts, d.StartByte)
	}
	var memberStarts []int // what makes a member a definition
	if !declsName {
		memberStarts = slices.Clone(starts)
		sort.Ints(memberStarts)
	}
	starts = append(starts, res.DeclOffsets()...)
	sort.Ints(starts)
	if declsName {
		memberStarts = starts
	}
	v := &versionSpans{clean: res.ErrorNodes == 0, reread: res.Reread(), fns: make([]fnSpan, 0, res.Functions())}
	for _, d := range res.Defs {
		if d.Kind != extract.KindFunction {
			continue
		}
		f := fnSpan{name: d.Name, start: int32(d.StartLine), end: int32(d.EndLine), open: point{-1, 0}}
		if d.BodyEnd > d.BodyStart {
			f.open, f.close = pointAt(lines, d.BodyStart), pointAt(lines, d.BodyEnd-1)
			i := sort.SearchInts(starts, d.BodyStart+1)
			f.leaf = i == len(starts) || starts[i] >= d.BodyEnd
		}
		v.fns = append(v.fns, f)
	}
	v.setMembers(sink, memberStarts)
	if !declsName { // C
		for _, d := range res.Defs {
			if d.Kind != extract.KindFunction {
				v.classes = append(v.classes, codegraph.BaseName(d.Name))
			}
		}
	}
	return v
}

// lineIndex holds the byte offset of each line's start.
type lineIndex = extract.LineIndex

// pointAt is the place of byte off in the text li indexes.
func pointAt(li lineIndex, off int) point {
	row := sort.Search(len(li), func(i int) bool { return li[i] > off }) - 1
	return point{int32(row), int32(off - li[row])}
}

// offsetAt is the byte at p in the text li indexes, or -1 past the text.
func offsetAt(li lineIndex, p point) int {
	if p.row < 0 || int(p.row) >= len(li) {
		return -1
	}
	return li[p.row] + int(p.col)
}
