package changes

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/extract"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/testutil/extractfixture"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// addedFunction is a definition appended to a file of each language (for
// Java, before the file's last closing brace).
var addedFunction = map[string]string{
	".java": "    int added%d(int x) { return x + %d; }\n",
	".c":    "int added_%d(int x) { return x + %d; }\n",
	".cpp":  "int added_%d(int x) { return x + %d; }\n",
	".hpp":  "int added_%d(int x) { return x + %d; }\n",
	".h":    "int added_%d(int x) { return x + %d; }\n",
	".go":   "func added%d(x int) int { return x + %d }\n",
	".rs":   "fn added_%d(x: i32) -> i32 { x + %d }\n",
}

// editHistory commits the extractor fixtures of the languages the mapper
// derives, then n commits of random line edits: comments inserted inside
// and outside bodies, statements repeated, lines deleted (syntax errors
// included), functions added and headers renamed; seed picks the edits.
func editHistory(t *testing.T, n int, seed uint64) *gitfixture.Repo {
	r := gitfixture.New(t)
	files := map[string][]string{}
	for _, f := range extractfixture.Read(t, filepath.Join("..", "extract", "testdata"), "java", "c", "cpp", "go", "rust") {
		files[f.Lang+"/"+f.Name] = strings.SplitAfter(string(f.Src), "\n")
	}
	write := func(paths ...string) {
		m := map[string]string{}
		for _, p := range paths {
			m[p] = strings.Join(files[p], "")
		}
		r.Write(m)
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	write(paths...)
	r.Commit("fixtures")
	rng := rand.New(rand.NewPCG(seed, 14))
	for c := 0; c < n; c++ {
		var touched []string
		for k := 0; k <= rng.IntN(2); k++ {
			p := paths[rng.IntN(len(paths))]
			lines := files[p]
			at := rng.IntN(len(lines))
			switch kind := rng.IntN(10); {
			case kind < 4:
				lines = slices.Insert(lines, at, fmt.Sprintf("  // edit %d\n", c))
			case kind < 6:
				if strings.HasSuffix(strings.TrimSpace(lines[at]), ";") {
					lines = slices.Insert(lines, at, lines[at])
				} else {
					lines = slices.Insert(lines, at, "\n")
				}
			case kind < 7:
				lines = slices.Delete(lines, at, at+1)
			case kind < 9:
				def := fmt.Sprintf(addedFunction[filepath.Ext(p)], c, c)
				end := len(lines)
				if strings.HasSuffix(p, ".java") {
					for end > 0 && !strings.HasPrefix(lines[end-1], "}") {
						end--
					}
					end = max(end-1, 0)
				}
				lines = slices.Insert(lines, end, def)
			default:
				if i := strings.Index(lines[at], "("); i > 0 {
					lines[at] = lines[at][:i] + "X" + lines[at][i:]
				} else {
					lines = slices.Insert(lines, at, "  // renamed nothing\n")
				}
			}
			files[p] = lines
			touched = append(touched, p)
		}
		write(touched...)
		r.Commit(fmt.Sprintf("edit %d", c))
	}
	return r
}

// mapHistory scrapes r's history with m and returns each file change's
// changed functions.
func mapHistory(t *testing.T, r *gitfixture.Repo, m *FunctionMapper) []string {
	t.Helper()
	gitDir := filepath.Join(r.Dir, ".git")
	var hs []gitrepo.Hash
	for _, l := range strings.Fields(r.Git("rev-list", "--reverse", "HEAD")) {
		h, _ := gitrepo.ParseHash(l)
		hs = append(hs, h)
	}
	var out []string
	err := gitrepo.DiffCommits(context.Background(), gitDir, hs, gitrepo.DiffOptions{Functions: m.Map, Workers: 1}, func(cd *gitrepo.CommitDiff) error {
		for _, f := range cd.Files {
			out = append(out, fmt.Sprintf("%s %s %v", cd.ID, f.Path(), f.ChangedFunctions))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMapperDerivesWhatAParseFinds: over a history of random edits in Java,
// C, C++, Go and Rust, the functions derived from the other version of each
// change (changed bodies only, or a skeleton) equal a whole parse's, version
// by version, and so do the changed functions of every row. Seeds 9 and
// 10 found C lines read differently beside an added comment.
func TestMapperDerivesWhatAParseFinds(t *testing.T) {
	seeds := []uint64{13, 9, 10}
	if testing.Short() {
		seeds = seeds[:1]
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkHistoryDerives(t, seed) })
	}
}

func checkHistoryDerives(t *testing.T, seed uint64) {
	r := editHistory(t, 120, seed)
	whole := NewFunctionMapper(0)
	whole.whole = true
	want := mapHistory(t, r, whole)
	derived := NewFunctionMapper(0)
	if got := mapHistory(t, r, derived); !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Errorf("row %d: derived %s, parsed %s", i, got[i], want[i])
			}
		}
		t.Fatalf("derived changed functions differ from whole parses (%d and %d rows)", len(got), len(want))
	}
	verified := NewFunctionMapper(0)
	verified.Verify = true
	mapHistory(t, r, verified)
	s := verified.Stats()
	t.Logf("%+v", s)
	if s.Mismatched != 0 || s.Verified != s.Skeleton+s.Bodies+s.Members {
		t.Errorf("verified %d derivations, %d differ from a whole parse: %v", s.Verified, s.Mismatched, s.Mismatches)
	}
	if s.Bodies == 0 || s.Members == 0 || s.Skeleton == 0 || s.Parsed == 0 {
		t.Errorf("the history did not exercise every way: %+v", s)
	}
	if ws := whole.Stats(); ws.Skeleton+ws.Bodies+ws.Members != 0 || ws.Parsed != s.Parsed+s.Skeleton+s.Bodies+s.Members {
		t.Errorf("whole parses %+v against derivations %+v", ws, s)
	}
}

// checkDerive derives version t of path from version p (changed lines
// deleted in p, added in t): it must go the way want says and equal a whole
// parse of t.
func checkDerive(t *testing.T, path string, p, tt []byte, deleted, added []int, want derivation) {
	t.Helper()
	ctx := context.Background()
	lang := codegraph.LanguageFor(path)
	got, how := derive(ctx, lang, path, parseSpans(ctx, lang, path, p), &textLines{text: p}, &textLines{text: tt}, deleted, added)
	if how != want {
		t.Errorf("derived by %s, want %s", how, want)
	}
	if d := parseSpans(ctx, lang, path, tt).diff(got); d != "" {
		t.Errorf("differs from a whole parse: %s", d)
	}
}

// TestDeriveBodiesOnly: an edit inside one method body is found by parsing
// that body alone; one that adds a definition inside the body, or breaks
// it, is not.
func TestDeriveBodiesOnly(t *testing.T) {
	p := []byte("class A {\n  int f(int x) {\n    return x;\n  }\n\n  int g() {\n    return 1;\n  }\n}\n")
	for _, tc := range []struct {
		name, body string
		how        derivation
	}{
		{"statement", "    int y = x * 2;\n    return y;\n", derivedBodies},
		{"anonymous class", "    Runnable r = new Runnable() { public void run() {} };\n    return x;\n", derivedSkeleton},
		{"unbalanced", "    if (x > 0) {\n    return x;\n", derivedParsed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := []byte("class A {\n  int f(int x) {\n" + tc.body + "  }\n\n  int g() {\n    return 1;\n  }\n}\n")
			added := make([]int, strings.Count(tc.body, "\n"))
			for i := range added {
				added[i] = 3 + i
			}
			checkDerive(t, "A.java", p, tt, []int{3}, added, tc.how)
		})
	}
}

// TestDeriveConditionalWithErrors: in a C file with a syntax error away
// from the change, a conditional added inside a body is read from that body
// alone when its branches pair, and the file is parsed whole when they do
// not (the extractor then reads the file in other ways too).
func TestDeriveConditionalWithErrors(t *testing.T) {
	head := "int f(int x) {\n  return x;\n}\n\nint g1(void) {\n  return 1;\n}\n\nint g2(void) {\n  return 2;\n}\n\n"
	tail := "int h(void) {\n  return FOO(;\n}\n"
	p := []byte(head + tail)
	if v := parseSpans(context.Background(), codegraph.LanguageFor("a.c"), "a.c", p); v.clean || !v.derivable() {
		t.Fatalf("P should have an error and be derivable: clean %v, derivable %v", v.clean, v.derivable())
	}
	for _, tc := range []struct {
		name, body string
		how        derivation
	}{
		{"paired branches", "#ifdef X\n  x++;\n#endif\n  return x;\n", derivedBodies},
		{"unpaired branches", "#ifdef X\n  if (x) {\n#else\n  if (!x) {\n#endif\n  x++;\n  }\n  return x;\n", derivedParsed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := []byte("int f(int x) {\n" + tc.body + "}\n" + head[len("int f(int x) {\n  return x;\n}\n"):] + tail)
			added := make([]int, strings.Count(tc.body, "\n"))
			for i := range added {
				added[i] = 2 + i
			}
			checkDerive(t, "a.c", p, tt, []int{2}, added, tc.how)
		})
	}
}

// TestDeriveSkeletonLeavesOutMembers: a skeleton leaves out unchanged
// members that define nothing, but not one that a changed line just before
// it could complete (an annotation added above a field), and the derived
// version equals a whole parse either way.
func TestDeriveSkeletonLeavesOutMembers(t *testing.T) {
	p := []byte("import a.B;\n\nclass A {\n  // a field\n  int a = 1;\n\n  int b = 2;\n\n  int f(int x) {\n    return x;\n  }\n}\n")
	for _, tc := range []struct {
		name    string
		t       string
		deleted []int // P lines
		added   []int // T lines
	}{
		{"method made to hold a class", "import a.B;\n\nclass A {\n  // a field\n  int a = 1;\n\n  int b = 2;\n\n  int g(int x) {\n    return new Object() { int h() { return 1; } }.h();\n  }\n}\n", []int{9, 10}, []int{9, 10}},
		{"annotation added above a field", "import a.B;\n\nclass A {\n  // a field\n  @Deprecated\n  int a = 1;\n\n  int b = 2;\n\n  int g(int x) {\n    return x;\n  }\n}\n", []int{9}, []int{5, 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDerive(t, "A.java", p, []byte(tc.t), tc.deleted, tc.added, derivedSkeleton)
		})
	}
}

// skeletonFor is the skeleton of Java version tt of A.java derived from p
// (changed lines deleted in p, added in tt), with methods left out or not.
func skeletonFor(p, tt []byte, deleted, added []int, methods bool) *skeleton {
	ctx := context.Background()
	lang := codegraph.LanguageFor("A.java")
	pv := parseSpans(ctx, lang, "A.java", p)
	d := newDeriver(lang, "A.java", pv, &textLines{text: p}, &textLines{text: tt, lines: extract.NewLineIndex(tt)}, deleted, added)
	return d.skeletonOf(ctx, nil, methods)
}

// TestDeriveSkeletonLeavesOutBodiesWithClasses: a Java method whose body
// holds definitions (anonymous classes, nested) and did not change is left
// out of the skeleton whole, and its definitions are put back from P; not
// when the change renames the method (an overload added), since their names
// are the method's.
func TestDeriveSkeletonLeavesOutBodiesWithClasses(t *testing.T) {
	body := "  void f() {\n    Runnable r = new Runnable() {\n      public void run() {\n        new Thread() { public void run() { g(); } }.start();\n      }\n    };\n  }\n\n  int g() {\n    return 1;\n  }\n"
	p := []byte("class A {\n" + body + "}\n")
	for _, tc := range []struct {
		name    string
		t       string
		deleted []int // P lines
		added   []int // T lines
		how     derivation
		opaque  int // bodies the skeleton leaves out whole
	}{
		{"class header changed", "class A implements B {\n" + body + "}\n", []int{1}, []int{1}, derivedSkeleton, 1},
		{"overload added", "class A {\n  void f(int x) { }\n" + body + "}\n", []int{1}, []int{1, 2}, derivedSkeleton, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDerive(t, "A.java", p, []byte(tc.t), tc.deleted, tc.added, tc.how)
			sk := skeletonFor(p, []byte(tc.t), tc.deleted, tc.added, false)
			if sk == nil || len(sk.opaque) != tc.opaque || bytes.Contains(sk.text, []byte("Runnable")) {
				t.Fatalf("skeleton leaves out %d bodies with definitions, want %d", len(sk.opaque), tc.opaque)
			}
		})
	}
}

// TestDeriveSkeletonLeavesOutChangedBodies: a changed Java leaf body whose
// changed statements read clean and define nothing is left out of the
// skeleton too; one that now defines something is kept and read with it.
func TestDeriveSkeletonLeavesOutChangedBodies(t *testing.T) {
	const rest = "  int f(int x) {\n    int y = x;\n    return y;\n  }\n\n  int g() {\n    return 1;\n  }\n}\n"
	p := []byte("class A {\n" + rest)
	for _, tc := range []struct {
		name, stmt string
		leftOut    bool
	}{
		{"statement", "    int y = x + 1;\n", true},
		{"anonymous class", "    int y = new Object() { int h() { return 1; } }.h();\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := []byte("class A implements B {\n" + strings.Replace(rest, "    int y = x;\n", tc.stmt, 1))
			deleted, added := []int{1, 3}, []int{1, 3}
			checkDerive(t, "A.java", p, tt, deleted, added, derivedSkeleton)
			sk := skeletonFor(p, tt, deleted, added, false)
			if sk == nil || bytes.Contains(sk.text, []byte(tc.stmt)) != !tc.leftOut {
				t.Fatalf("skeleton %q: the changed statement left out %v, want %v", sk.text, !tc.leftOut, tc.leftOut)
			}
		})
	}
}

// TestDeriveSkeletonLeavesOutMethods: a Java skeleton leaves unchanged leaf
// methods out whole, signatures included, where no other method of their
// class shares their name, and puts them back from P under their class as
// the skeleton names it; where it does not (the class renamed, an overload
// added) the skeleton is read again with them.
func TestDeriveSkeletonLeavesOutMethods(t *testing.T) {
	const rest = "  int z = 0;\n\n  int f(int x) {\n    return x;\n  }\n\n  int g(int x) {\n    return x;\n  }\n\n  int g(String s) {\n    return 0;\n  }\n}\n"
	p := []byte("class A {\n" + rest)
	for _, tc := range []struct {
		name, t        string
		deleted, added []int
		fLeftOut       bool // by the first skeleton
	}{
		{"class header changed", "class A implements B {\n" + rest, []int{1}, []int{1}, true},
		{"class renamed", "class C {\n" + rest, []int{1}, []int{1}, true},
		{"overload added", "class A {\n  int f() { return 0; }\n" + rest, nil, []int{2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tt := []byte(tc.t)
			checkDerive(t, "A.java", p, tt, tc.deleted, tc.added, derivedSkeleton)
			sk := skeletonFor(p, tt, tc.deleted, tc.added, true)
			if sk == nil || bytes.Contains(sk.text, []byte("int f(int x)")) == tc.fLeftOut || !bytes.Contains(sk.text, []byte("int g(String s)")) {
				t.Fatalf("skeleton %q: want f left out %v and g's overloads kept", sk.text, tc.fLeftOut)
			}
		})
	}
}

// TestMapperFindsEachVersionOnce: a chain of changes mapped all at once from
// many goroutines, each change's new version the next one's old version, finds
// every version once (waiting for the goroutine finding it) and charges each
// change with the function it edits.
func TestMapperFindsEachVersionOnce(t *testing.T) {
	const n = 40
	changes := javaChain(n)
	m := NewFunctionMapper(0)
	got := make([][]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = m.Map(changes[i])
		}()
	}
	wg.Wait()
	s := m.Stats()
	if found := s.Parsed + s.Skeleton + s.Bodies + s.Members; found != n+1 || s.Cached != n-1 {
		t.Errorf("found %d versions and remembered %d, want %d and %d: %+v", found, s.Cached, n+1, n-1, s)
	}
	for i, g := range got {
		if want := []string{"A.java:A.f"}; !slices.Equal(g, want) {
			t.Errorf("change %d charged %v, want %v", i, g, want)
		}
	}
}

// TestMapperExpectsInCommitOrder: a chain of changes whose versions were
// expected in order is mapped from goroutines started last change first;
// each change waits for the version the change before it finds, so only
// the first version is parsed whole and every other one is derived.
func TestMapperExpectsInCommitOrder(t *testing.T) {
	const n = 40
	m := NewFunctionMapper(0)
	changes := javaChain(n)
	claims := make([]any, n)
	releases := make([]func(), n)
	for i, lc := range changes {
		claims[i], releases[i] = m.Expect([]gitrepo.Version{{Path: lc.OldPath, Blob: lc.OldBlob}, {Path: lc.NewPath, Blob: lc.NewBlob}})
	}
	got := make([][]string, n)
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer releases[i]()
			lc := *changes[i]
			lc.Claim = claims[i]
			got[i] = m.Map(&lc)
		}()
	}
	waitOrFail(t, &wg, "the changes wait for each other")
	s := m.Stats()
	if s.Parsed != 1 || s.Parsed+s.Skeleton+s.Bodies+s.Members != n+1 || s.Cached != n-1 {
		t.Errorf("parsed %d versions whole, found %d and remembered %d; want 1, %d and %d: %+v", s.Parsed, s.Parsed+s.Skeleton+s.Bodies+s.Members, s.Cached, n+1, n-1, s)
	}
	for i, g := range got {
		if want := []string{"A.java:A.f"}; !slices.Equal(g, want) {
			t.Errorf("change %d charged %v, want %v", i, g, want)
		}
	}
}

// TestMapperExpectReleasedUnfound: a version an earlier commit expected
// but never mapped (its Functions call did not come) is found by the next
// commit that needs it once the claim is released; and a version a later
// commit expected is found, not waited for.
func TestMapperExpectReleasedUnfound(t *testing.T) {
	changes := javaChain(2)
	m := NewFunctionMapper(0)
	_, release0 := m.Expect([]gitrepo.Version{{Path: "A.java", Blob: changes[0].OldBlob}, {Path: "A.java", Blob: changes[0].NewBlob}})
	claim1, release1 := m.Expect([]gitrepo.Version{{Path: "A.java", Blob: changes[1].OldBlob}, {Path: "A.java", Blob: changes[1].NewBlob}})
	done := mapLater(m, changes[1], claim1)
	select {
	case got := <-done:
		t.Fatalf("change 1 mapped (%v) before change 0's claim on its old version was released", got)
	case <-time.After(50 * time.Millisecond):
	}
	release0()
	if got := mappedOrFail(t, done, "change 1 still waits after change 0 released its claims"); !slices.Equal(got, []string{"A.java:A.f"}) {
		t.Errorf("change 1 charged %v, want [A.java:A.f]", got)
	}
	defer release1()

	// Change 0 mapped late, under a claim made before change 1's, does not
	// wait for versions change 1 still holds.
	m = NewFunctionMapper(0)
	claim0, release0 := m.Expect(nil)
	defer release0()
	_, release1 = m.Expect([]gitrepo.Version{{Path: "A.java", Blob: changes[0].NewBlob}})
	defer release1()
	done = mapLater(m, changes[0], claim0)
	if got := mappedOrFail(t, done, "change 0 waits for a version a later commit claimed"); !slices.Equal(got, []string{"A.java:A.f"}) {
		t.Errorf("change 0 charged %v, want [A.java:A.f]", got)
	}
}

// mapLater maps change lc under claim in a goroutine and sends what it
// charged.
func mapLater(m *FunctionMapper, lc *gitrepo.LineChanges, claim any) <-chan []string {
	done := make(chan []string, 1)
	go func() {
		c := *lc
		c.Claim = claim
		done <- m.Map(&c)
	}()
	return done
}

// mappedOrFail receives from done, failing the test after a while with
// what.
func mappedOrFail(t *testing.T, done <-chan []string, what string) []string {
	t.Helper()
	select {
	case got := <-done:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal(what)
		return nil
	}
}

// waitOrFail waits for wg, failing the test after a while with what.
func waitOrFail(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal(what)
	}
}

// javaChain is n changes of A.java, each one's new version the next one's
// old version, each editing f.
func javaChain(n int) []*gitrepo.LineChanges {
	versions := make([][]byte, n+1)
	for i := range versions {
		versions[i] = []byte(fmt.Sprintf("class A {\n  int f(int x) {\n    return x + %d;\n  }\n\n  int g() {\n    return 1;\n  }\n}\n", i))
	}
	out := make([]*gitrepo.LineChanges, n)
	for i := range out {
		var oldBlob, newBlob gitrepo.Hash
		oldBlob[0], newBlob[0] = byte(i), byte(i+1)
		out[i] = &gitrepo.LineChanges{OldPath: "A.java", NewPath: "A.java", OldBlob: oldBlob, NewBlob: newBlob,
			Old: versions[i], New: versions[i+1], Deleted: []int{3}, Added: []int{3}}
	}
	return out
}

// TestMapperSkipsExcluded: files the graph leaves out (vendored
// dependencies) map to no functions, so history never names a function no
// graph holds, and they cost no parse.
func TestMapperSkipsExcluded(t *testing.T) {
	oldSrc, newSrc := []byte("int f(void) {\n  return 1;\n}\n"), []byte("int f(void) {\n  return 2;\n}\n")
	for _, c := range []struct {
		path string
		want []string
	}{
		{"src/a.c", []string{"src/a.c:f"}},
		{"deps/lua/a.c", nil},
		{"vendor/a.c", nil},
	} {
		m := NewFunctionMapper(0)
		var oldBlob, newBlob gitrepo.Hash
		oldBlob[0], newBlob[0] = 1, 2
		got := m.Map(&gitrepo.LineChanges{OldPath: c.path, NewPath: c.path, OldBlob: oldBlob, NewBlob: newBlob,
			Old: oldSrc, New: newSrc, Deleted: []int{2}, Added: []int{2}})
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: charged %v, want %v", c.path, got, c.want)
		}
		if s := m.Stats(); c.want == nil && s.Parsed+s.Skeleton+s.Bodies+s.Members != 0 {
			t.Errorf("%s: parsed %+v, want nothing", c.path, s)
		}
	}
}

// TestMapperReadsFilesAsTheGraph: the mapper reads a file as the graph
// build does. Headers parses .h files as the graph's (C++ here, so a method
// in a struct is A.f; C reads no function there); Exclude replaces the
// default exclusions, as Options.Exclude does; a generated or minified
// version, which the graph does not parse, maps to no function.
func TestMapperReadsFilesAsTheGraph(t *testing.T) {
	h := "struct A {\n  int f() {\n    return %d;\n  }\n};\n"
	c := "int f(void) {\n  return %d;\n}\n"
	for _, tc := range []struct {
		name, path, src string
		line            int // the changed line
		headers         string
		exclude         []string
		want            []string
	}{
		{"header as C++", "a.h", h, 3, "cpp", nil, []string{"a.h:A.f"}},
		{"header as C", "a.h", h, 3, "", nil, nil},
		{"excluded by the list", "gen/a.c", c, 2, "", []string{"gen"}, nil},
		{"the list replaces the defaults", "vendor/a.c", c, 2, "", []string{"gen"}, []string{"vendor/a.c:f"}},
		{"generated", "a.c", "// @generated\n" + c, 3, "", nil, nil},
		{"minified", "a.c", "/* " + strings.Repeat("x", 10001) + " */\n" + c, 3, "", nil, nil},
		{"a long line, not minified", "a.c", "/* " + strings.Repeat("x", 9000) + " */\n" + strings.Repeat("\n", 40) + c, 43, "", nil, []string{"a.c:f"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewFunctionMapper(0)
			m.Headers, m.Exclude = tc.headers, tc.exclude
			var oldBlob, newBlob gitrepo.Hash
			oldBlob[0], newBlob[0] = 1, 2
			got := m.Map(&gitrepo.LineChanges{OldPath: tc.path, NewPath: tc.path, OldBlob: oldBlob, NewBlob: newBlob,
				Old: fmt.Appendf(nil, tc.src, 1), New: fmt.Appendf(nil, tc.src, 2), Deleted: []int{tc.line}, Added: []int{tc.line}})
			if !slices.Equal(got, tc.want) {
				t.Errorf("charged %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDeriveRunsWithMethods: in Java, a change to whole leaf methods (a
// signature, a method added or removed) is read from the changed methods
// alone, named as in their class, unless a name depends on methods outside
// the run (overloads) or a method holds a definition.
func TestDeriveRunsWithMethods(t *testing.T) {
	p := "class A {\n  int a = 1;\n\n  int f(int x) {\n    return x;\n  }\n\n  int g() {\n    return 1;\n  }\n\n  class B {\n    void h() {}\n  }\n}\n"
	for _, tc := range []struct {
		name           string
		t              string
		deleted, added []int
		how            derivation
	}{
		{"signature changed", "class A {\n  int a = 1;\n\n  long f(long x) {\n    return x;\n  }\n\n  int g() {\n    return 1;\n  }\n\n  class B {\n    void h() {}\n  }\n}\n",
			[]int{4}, []int{4}, derivedMembers},
		{"method added", "class A {\n  int a = 1;\n\n  int f(int x) {\n    return x;\n  }\n\n  int e() { return 2; }\n\n  int g() {\n    return 1;\n  }\n\n  class B {\n    void h() {}\n  }\n}\n",
			nil, []int{8, 9}, derivedMembers},
		{"constructor added in the inner class", "class A {\n  int a = 1;\n\n  int f(int x) {\n    return x;\n  }\n\n  int g() {\n    return 1;\n  }\n\n  class B {\n    B() {}\n    void h() {}\n  }\n}\n",
			nil, []int{13}, derivedMembers},
		{"method removed", "class A {\n  int a = 1;\n\n  int g() {\n    return 1;\n  }\n\n  class B {\n    void h() {}\n  }\n}\n",
			[]int{4, 5, 6, 7}, nil, derivedMembers},
		{"overload of a method outside the run", "class A {\n  int a = 1;\n\n  int f(int x) {\n    return x;\n  }\n\n  int g() {\n    return 1;\n  }\n\n  int f(String s) { return 0; }\n\n  class B {\n    void h() {}\n  }\n}\n",
			nil, []int{12, 13}, derivedSkeleton},
		{"overloads added in two runs", "class A {\n  int a = 1;\n  int e(int x) { return x; }\n\n  int f(int x) {\n    return x;\n  }\n\n  int g() {\n    return 1;\n  }\n\n  int e(String s) { return 0; }\n\n  class B {\n    void h() {}\n  }\n}\n",
			nil, []int{3, 12, 13}, derivedSkeleton},
		{"method made to hold a class", "class A {\n  int a = 1;\n\n  int f(int x) {\n    return x;\n  }\n\n  Object g() {\n    return new Object() {};\n  }\n\n  class B {\n    void h() {}\n  }\n}\n",
			[]int{8, 9}, []int{8, 9}, derivedSkeleton},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDerive(t, "A.java", []byte(p), []byte(tc.t), tc.deleted, tc.added, tc.how)
		})
	}
}

// TestDeriveRunsLeaveOutBodies: a run of Java members is read with the
// bodies of its methods left out where their lines did not change (a
// signature over several lines changed above its body's line): the
// methods keep their lines, their braces' places and their names.
func TestDeriveRunsLeaveOutBodies(t *testing.T) {
	p := "class A {\n  int f(int x,\n        int y) {\n    return x + y;\n  }\n\n  int h(int x,\n        int y) { return x; }\n}\n"
	for _, tc := range []struct {
		name, t        string
		deleted, added []int
	}{
		{"a body over lines", strings.Replace(p, "int f(int x,", "long f(int x,", 1), []int{2}, []int{2}},
		{"a body on one line", strings.Replace(p, "int h(int x,", "long h(int x,", 1), []int{7}, []int{7}},
		{"a parameter added", strings.Replace(p, "  int f(int x,\n", "  int f(int w,\n        int x,\n", 1), []int{2}, []int{2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDerive(t, "A.java", []byte(p), []byte(tc.t), tc.deleted, tc.added, derivedMembers)
		})
	}
}

// TestDeriveHeaderGuardAdded: an include guard added around a header makes
// its comments and declarations children of the #ifndef, not members of the
// file, so a skeleton that left them out cannot put them back.
func TestDeriveHeaderGuardAdded(t *testing.T) {
	p := "/* a header */\n/*\n * more words\n */\n\ntypedef struct {\n    int state[5];\n} CTX;\n\nvoid Init(CTX *c);\nvoid Update(CTX *c, const unsigned char *data, int len);\nstatic int f(int x) {\n    return x;\n}\n"
	tt := "#ifndef A_H\n#define A_H\n" + p + "\n#ifdef TEST\nint aTest(int argc, char **argv);\n#endif\n#endif\n"
	checkDerive(t, "a.h", []byte(p), []byte(tt), nil, []int{1, 2, 17, 18, 19, 20, 21}, derivedParsed)
}

// TestDeriveSkeletonPutsMembersBack: members a skeleton left out go back
// into the container that holds them in T, and into a file whose skeleton
// has no members left at all.
func TestDeriveSkeletonPutsMembersBack(t *testing.T) {
	for _, tc := range []struct {
		name, p, t     string
		deleted, added []int
	}{
		{"struct split in two",
			"pub struct H {\n    pub a: u32,\n\n    pub x: u32,\n\n    // b's comment\n    pub b: u32,\n}\n\nfn f() -> u32 {\n    1\n}\n",
			"pub struct H {\n    pub a: u32,\n}\n\npub struct I {\n    pub x: u32,\n\n    // b's comment\n    pub b: u32,\n}\n\nfn f() -> u32 {\n    1\n}\n",
			[]int{3}, []int{3, 4, 5}},
		{"only imports left",
			"use a::b;\nuse c::d;\n\nfn f() -> u32 {\n    1\n}\n",
			"use a::b;\nuse c::d;\n\n",
			[]int{4, 5, 6}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			lang := codegraph.LanguageFor("a.rs")
			got, _ := derive(ctx, lang, "a.rs", parseSpans(ctx, lang, "a.rs", []byte(tc.p)), &textLines{text: []byte(tc.p)}, &textLines{text: []byte(tc.t)}, tc.deleted, tc.added)
			if got == nil {
				return // parsed whole: nothing derived to be wrong
			}
			if d := parseSpans(ctx, lang, "a.rs", []byte(tc.t)).diff(got); d != "" {
				t.Errorf("differs from a whole parse: %s", d)
			}
		})
	}
}

// TestMapperRecoversFromDerivePanic: a derivation that panics (a bug in
// deriving) costs that file version a whole parse, not the scrape: the
// change maps as a whole parse maps it, and the panic is counted.
func TestMapperRecoversFromDerivePanic(t *testing.T) {
	defer func(d func(context.Context, extract.Language, string, *versionSpans, *textLines, *textLines, []int, []int) (*versionSpans, derivation)) {
		deriveVersion = d
	}(deriveVersion)
	deriveVersion = func(context.Context, extract.Language, string, *versionSpans, *textLines, *textLines, []int, []int) (*versionSpans, derivation) {
		panic("derivation bug")
	}
	oldSrc := []byte("class A {\n  int f(int x) {\n    return x;\n  }\n\n  int g() {\n    return 1;\n  }\n}\n")
	newSrc := []byte("class A {\n  int f(int x) {\n    return x + 1;\n  }\n\n  int g() {\n    return 1;\n  }\n}\n")
	var oldBlob, newBlob gitrepo.Hash
	oldBlob[0], newBlob[0] = 1, 2
	m := NewFunctionMapper(0)
	got := m.Map(&gitrepo.LineChanges{OldPath: "A.java", NewPath: "A.java", OldBlob: oldBlob, NewBlob: newBlob,
		Old: oldSrc, New: newSrc, Deleted: []int{3}, Added: []int{3}})
	if want := []string{"A.java:A.f"}; !slices.Equal(got, want) {
		t.Errorf("charged %v, want %v", got, want)
	}
	s := m.Stats()
	if s.Recovered != 1 || len(s.RecoveredFrom) != 1 || !strings.Contains(s.RecoveredFrom[0], "A.java") || !strings.Contains(s.RecoveredFrom[0], "derivation bug") {
		t.Errorf("recovered %d %q, want 1 naming the file and the panic", s.Recovered, s.RecoveredFrom)
	}
	if s.Parsed != 2 || s.Skeleton+s.Bodies+s.Members != 0 {
		t.Errorf("stats %+v: want both versions parsed whole", s)
	}
}

// TestDeriveCHeaderRuns: in a C header, a change to prototypes or to the
// fields of a typedef'd struct, inside the include guard and inside
// conditionals there, is read from its run of members alone (conditionals
// at file level and typedef'd field lists hold members; a prototype names
// nothing in C), and equals a whole parse; a prototype made a definition
// is read as a run of members too (TestDeriveCFunctionRuns).
func TestDeriveCHeaderRuns(t *testing.T) {
	head := "#ifndef A_H\n#define A_H\n\n#include <stddef.h>\n\n"
	p := head + "typedef struct ctx {\n    int state[5];\n    size_t n;\n} CTX;\n\n" + // 6-9
		"void Init(CTX *c);\nvoid Update(CTX *c, const unsigned char *data, int len);\n\n" + // 11-12
		"#ifdef TEST\nint aTest(int argc, char **argv);\nstruct t {\n    int a;\n};\n#endif\n\n" + // 14-19
		"static inline int f(int x) {\n    return x;\n}\n\n#define G(x) ((x)+1)\n\n#endif\n" // 21-23, 25, 27
	edit := func(at, del int, add ...string) string { return editLines(p, at, del, add...) }
	checkDeriveCases(t, "a.h", p, []deriveCase{
		{"prototype changed", edit(11, 1, "void Init(CTX *c, int flags);\n"), []int{11}, []int{11}, derivedMembers},
		{"prototype added", edit(13, 0, "size_t Size(const CTX *c);\n"), nil, []int{13}, derivedMembers},
		{"field added to a typedef'd struct", edit(9, 0, "    long total;\n"), nil, []int{9}, derivedMembers},
		{"prototype changed in a conditional", edit(15, 1, "int aTest(int argc, char **argv, int flags);\n"), []int{15}, []int{15}, derivedMembers},
		{"field changed in a conditional", edit(17, 1, "    long a;\n"), []int{17}, []int{17}, derivedMembers},
		{"prototype made a definition", edit(11, 1, "void Init(CTX *c) { c->n = 0; }\n"), []int{11}, []int{11}, derivedMembers},
	})
}

// deriveCase is a version T of a file derived from P: its text, changed
// lines (deleted in P, added in T) and the derivation expected.
type deriveCase struct {
	name           string
	t              string
	deleted, added []int
	how            derivation
}

// checkDeriveCases checks each case's derivation from p (checkDerive).
func checkDeriveCases(t *testing.T, path, p string, cases []deriveCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkDerive(t, path, []byte(p), []byte(tc.t), tc.deleted, tc.added, tc.how)
		})
	}
}

// editLines is p with del lines from line at (1-based) replaced by add.
func editLines(p string, at, del int, add ...string) string {
	lines := strings.SplitAfter(p, "\n")
	out := append([]string(nil), lines[:at-1]...)
	out = append(out, add...)
	return strings.Join(append(out, lines[at-1+del:]...), "")
}

// TestMapperRemembersWithinBudget: the versions remembered hold at most
// the mapper's byte budget, the oldest forgotten first.
func TestMapperRemembersWithinBudget(t *testing.T) {
	m := NewFunctionMapper(0)
	v := &versionSpans{fns: make([]fnSpan, 10), members: make([]member, 100)}
	m.maxBytes = 3*v.size() + 1
	for i := range 5 {
		m.remember("a.c", gitrepo.Hash{byte(i)}, v)
	}
	if len(m.cache) != 3 || m.bytes != 3*v.size() {
		t.Fatalf("remembered %d versions, %d bytes; want 3, %d", len(m.cache), m.bytes, 3*v.size())
	}
	if m.cache[spanKey{"a.c", gitrepo.Hash{1}}] != nil || m.cache[spanKey{"a.c", gitrepo.Hash{4}}] == nil {
		t.Error("the oldest versions should be forgotten first")
	}
}

// TestDeriveCFunctionRuns: in C a run of members may hold leaf functions
// (one added, removed, or with its signature changed), read alone with
// their names, unless a name is defined twice in the file, by a function
// or a struct, where the whole parse numbers it (f#2).
func TestDeriveCFunctionRuns(t *testing.T) {
	p := "#include <stdio.h>\n\nstruct point {\n    int x, y;\n};\n\n" + // 1-5
		"static int f(int x) {\n    return x;\n}\n\n" + // 7-9
		"#ifdef A\nint g(void) {\n    return 1;\n}\n#else\nint g(void) {\n    return 2;\n}\n#endif\n\n" + // 11-19
		"int h(void) {\n    return f(1);\n}\n" // 21-23
	edit := func(at, del int, add ...string) string { return editLines(p, at, del, add...) }
	added := func(from, n int) []int {
		var a []int
		for i := range n {
			a = append(a, from+i)
		}
		return a
	}
	checkDeriveCases(t, "a.c", p, []deriveCase{
		{"function added", edit(10, 0, "\n", "static long k(long y) {\n", "    return y * 2;\n", "}\n"), nil, added(10, 4), derivedMembers},
		{"signature changed", edit(7, 1, "static int f(int x, int y) {\n"), []int{7}, []int{7}, derivedMembers},
		{"function removed", edit(6, 4), []int{6, 7, 8, 9}, nil, derivedMembers},
		{"function added with a struct's name", edit(10, 0, "\n", "int point(void) {\n", "    return 0;\n", "}\n"), nil, added(10, 4), derivedSkeleton},
		{"function added with another's name", edit(10, 0, "\n", "int h(void) {\n", "    return 0;\n", "}\n"), nil, added(10, 4), derivedSkeleton},
		{"numbered function changed", edit(16, 1, "int g(int a) {\n"), []int{16}, []int{16}, derivedSkeleton},
		{"function made to hold a struct", edit(8, 1, "    struct s { int a; } v = {x};\n", "    return v.a;\n"), []int{8}, added(8, 2), derivedSkeleton},
	})
}

// TestDeriveCPreprocessorRuns: a run of preprocessor lines reads alone: a
// macro's definition changed, lines added right after a preprocessor line
// (whose node ends at the start of the next line), before a struct.
func TestDeriveCPreprocessorRuns(t *testing.T) {
	p := "#include <stddef.h>\n#include <stdio.h>\n\n" + // 1-3
		"#define stat_add(n) do { \\\n    used += (n); \\\n} while (0)\n\n" + // 4-7
		"#define LIMIT 10\nstruct buffer {\n    char *data;\n};\n\n" + // 8-12
		"int f(int x) {\n    return x;\n}\n" // 13-15
	edit := func(at, del int, add ...string) string { return editLines(p, at, del, add...) }
	checkDeriveCases(t, "a.h", p, []deriveCase{
		{"macro's body changed", edit(5, 1, "    used += (n) + 1; \\\n"), []int{5}, []int{5}, derivedMembers},
		{"macro's name changed", edit(4, 1, "#define stat_incr(n) do { \\\n"), []int{4}, []int{4}, derivedMembers},
		{"include added after an include", edit(2, 0, "#include <string.h>\n"), nil, []int{2}, derivedMembers},
		{"comment added after an include", edit(3, 0, "  // a comment\n"), nil, []int{3}, derivedMembers},
		{"define added before a struct", edit(9, 0, "#define LIMIT_MAX 20\n"), nil, []int{9}, derivedMembers},
	})
	// An #else branch ends where #endif begins: lines added at its end
	// move its end. A run adding an #else changes the containers.
	c := "#ifndef HAVE_SIZE\nsize_t f_size(void *p);\n#else\n\n#define X 1\n#endif\n\nint f(int x) {\n    return x;\n}\n"
	checkDeriveCases(t, "a.h", c, []deriveCase{
		{"define added at the end of an #else", editLines(c, 6, 0, "#define Y 2\n"), nil, []int{6}, derivedMembers},
	})
	// A conditional among an initializer's elements is no container.
	l := "static const char *names[] = {\n    \"a\",\n#ifdef X\n    \"b\",\n#endif\n    \"c\",\n};\n\nint f(int x) {\n    return x;\n}\n"
	checkDeriveCases(t, "a.c", l, []deriveCase{
		{"element beside a conditional changed", strings.Replace(l, `"c"`, `"d"`, 1), []int{6}, []int{6}, derivedMembers},
	})
	g := "#ifndef G_H\n#define G_H\n\n#ifndef HAVE_SIZE\nsize_t f_size(void *p);\n#endif\n\n#endif\n"
	checkDeriveCases(t, "a.h", g, []deriveCase{
		{"#else added", editLines(g, 6, 0, "size_t g(void *p);\n#else\n#define g(p) f_size(p)\n"), nil, []int{6, 7, 8}, derivedSkeleton},
	})
}

// TestDeriveCRunsInConditionals: runs in a header's conditionals that add a
// function (its conditional then holds a definition), add a prototype at
// the end of an #else branch (which ends at its last member), or add one
// name in two branches (the second numbered f#2) equal a whole parse; so
// does a skeleton beside a conditional, whose first member it keeps (the
// newline ending the #ifdef line would take in the blank lines left).
func TestDeriveCRunsInConditionals(t *testing.T) {
	p := "#ifndef A_H\n#define A_H\n\nvoid a(void);\n\n#ifdef X\nvoid b(void);\n\n#else\nvoid c(void);\n#endif\n\n#endif\n"
	checkDeriveCases(t, "a.h", p, []deriveCase{
		{"function added", "#ifndef A_H\n#define A_H\n\nvoid a(void);\nstatic inline int f(void) { return 1; }\n\n#ifdef X\nvoid b(void);\n\n#else\nvoid c(void);\n#endif\n\n#endif\n", nil, []int{5}, derivedMembers},
		{"prototype added at the end of #else", "#ifndef A_H\n#define A_H\n\nvoid a(void);\n\n#ifdef X\nvoid b(void);\n\n#else\nvoid c(void);\nvoid d(void);\n#endif\n\n#endif\n", nil, []int{11}, derivedSkeleton},
		{"one name in two branches", "#ifndef A_H\n#define A_H\n\nvoid a(void);\n\n#ifdef X\nvoid b(void);\nint g(void) { return 1; }\n#else\nint g(void) { return 2; }\nvoid c(void);\n#endif\n\n#endif\n", []int{8}, []int{8, 10}, derivedSkeleton},
	})
	p = strings.Replace(p, "#ifdef X", "#if X > 1", 1)
	checkDeriveCases(t, "a.h", p, []deriveCase{
		{"skeleton beside a conditional", editLines(p, 12, 0, "static int f(void) {\n", "    struct s { int q; } v = {1};\n", "    return v.q;\n", "}\n"), nil, []int{12, 13, 14, 15}, derivedSkeleton},
	})
}

// TestLinesOf: a text's line index made from its lines as the differ cuts
// them is the one made from the text, and so are its line count and
// whether it reads as minified.
func TestLinesOf(t *testing.T) {
	long := strings.Repeat("x", 10001)
	for _, text := range []string{"", "a", "a\n", "a\nb", "a\n\nb\n", "\n\n", strings.Repeat("int x;\n", 400), long + "\n" + strings.Repeat("y\n", 100), strings.Repeat(long[:400]+"\n", 10)} {
		var lines [][]byte
		for rest := []byte(text); len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n') + 1
			if i == 0 {
				i = len(rest)
			}
			lines = append(lines, rest[:i])
			rest = rest[i:]
		}
		got, want := linesOf([]byte(text), lines), &textLines{text: []byte(text)}
		if !slices.Equal(got.index(), want.index()) {
			t.Errorf("%.20q: lines %v, want %v", text, got.lines, want.lines)
		}
		minified := strings.Contains(text, long[:400]) // the long lines
		if got.count() != countLines([]byte(text)) || got.minified() != minified {
			t.Errorf("%.20q: %d lines, minified %v; want %d, %v", text, got.count(), got.minified(), countLines([]byte(text)), minified)
		}
	}
}

// countLines counts lines as the differ cuts them, from the text: what
// textLines.count reads from a line index.
func countLines(b []byte) int {
	n := bytes.Count(b, []byte{'\n'})
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

// TestRustSkeletonNotWithItemMacros: a Rust version with item macros is
// not derived from a skeleton: whether a macro is read in place depends on
// the bodies a skeleton leaves out.
func TestRustSkeletonNotWithItemMacros(t *testing.T) {
	p := "mac! {\n    fn a() {\n        1\n    }\n}\n\nfn c() {\n    2\n}\n"
	tt := strings.Replace(p, "fn c() {", "fn c(x: i32) {", 1)
	checkDerive(t, "a.rs", []byte(p), []byte(tt), []int{7}, []int{7}, derivedParsed)
	plain := strings.Replace(strings.Replace(p, "mac! {", "mod m {", 1), "fn c() {", "fn c() {", 1)
	checkDerive(t, "a.rs", []byte(plain), []byte(strings.Replace(plain, "fn c() {", "fn c(x: i32) {", 1)), []int{7}, []int{7}, derivedSkeleton)
}
