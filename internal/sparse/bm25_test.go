package sparse

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// tiny is the hand-checked corpus:
//
//	doc  text                          tokens                          |d|
//	a    apple banana apple            apple×2 banana                    3
//	b    banana cherry                 banana cherry                     2
//	c    cherry cherry cherry durian   cherry×3 durian                   4
//
// N = 3, total length 9, avgdl = 3.
var tiny = map[string]string{
	"a": "apple banana apple",
	"b": "banana cherry",
	"c": "cherry cherry cherry durian",
}

func build(t testing.TB, cfg Config, docs map[string]string) *Index {
	t.Helper()
	b := NewBuilder(cfg)
	// Map order is random: adding order must not matter.
	for id, text := range docs {
		if err := b.Add(id, text); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

const eps = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= eps*math.Max(1, math.Abs(b)) }

func checkHits(t *testing.T, got, want []Hit) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d hits %v, want %d %v", len(got), got, len(want), want)
	}
	for i := range want {
		if got[i].DocID != want[i].DocID || !near(got[i].Score, want[i].Score) {
			t.Fatalf("hit %d: got %+v, want %+v (all: %v)", i, got[i], want[i], got)
		}
	}
}

func TestBM25HandComputed(t *testing.T) {
	ix := build(t, DefaultConfig(), tiny)
	if ix.Len() != 3 || ix.NumTerms() != 4 || ix.AvgDocLen() != 3 {
		t.Fatalf("Len %d NumTerms %d AvgDocLen %v, want 3 4 3", ix.Len(), ix.NumTerms(), ix.AvgDocLen())
	}
	// k1 = 1.2, b = 0.75, avgdl = 3.
	// Length norms K(d) = k1·(1 − b + b·|d|/avgdl):
	//   K(a) = 1.2·(0.25 + 0.75·3/3) = 1.2
	//   K(b) = 1.2·(0.25 + 0.75·2/3) = 1.2·0.75 = 0.9
	//   K(c) = 1.2·(0.25 + 0.75·4/3) = 1.2·1.25 = 1.5
	// IDF = ln(1 + (N − df + 0.5)/(df + 0.5)):
	//   df = 1 (apple, durian): ln(1 + 2.5/1.5) = ln(8/3) = 0.98082925301172…
	//   df = 2 (banana, cherry): ln(1 + 1.5/2.5) = ln(1.6) = 0.47000362924573…
	idf1, idf2 := math.Log(8.0/3.0), math.Log(1.6)
	if !near(idf1, 0.9808292530117262) || !near(idf2, 0.47000362924573563) {
		t.Fatalf("idf arithmetic: %v %v", idf1, idf2)
	}

	// "apple": only a, tf 2: idf1 · 2·2.2/(2 + 1.2) = idf1 · 1.375 = 1.34864022289112…
	checkHits(t, ix.Search("apple", 10), []Hit{{"a", idf1 * 4.4 / 3.2}})
	checkHits(t, ix.Search("apple", 10), []Hit{{"a", 1.3486402228911236}})

	// "banana": tf 1 in a and b; the shorter b wins.
	//   a: idf2 · 2.2/(1 + 1.2) = idf2 = 0.47000362924573…
	//   b: idf2 · 2.2/(1 + 0.9) = idf2 · 1.15789… = 0.54421472860032…
	checkHits(t, ix.Search("banana", 10), []Hit{{"b", 0.5442147286003255}, {"a", 0.47000362924573563}})

	// "cherry durian":
	//   c: idf2 · 3·2.2/(3 + 1.5) + idf1 · 2.2/(1 + 1.5)
	//    = 0.470003629·1.466666… + 0.980829253·0.88 = 0.689338656 + 0.863129743 = 1.55246839887…
	//   b: idf2 · 2.2/1.9 = 0.54421472860032…
	checkHits(t, ix.Search("cherry durian", 10), []Hit{
		{"c", idf2*6.6/4.5 + idf1*2.2/2.5},
		{"b", idf2 * 2.2 / 1.9},
	})
	checkHits(t, ix.Search("Cherry, DURIAN!", 10), []Hit{{"c", 1.552468398877398}, {"b", 0.5442147286003255}})

	// A query token repeated counts twice, like duplicate Lucene clauses.
	checkHits(t, ix.Search("apple apple", 10), []Hit{{"a", 2 * 1.3486402228911236}})

	if got := ix.DocFreq("cherry"); got != 2 {
		t.Errorf("DocFreq(cherry) = %d, want 2", got)
	}
	if got := ix.DocFreq("zebra"); got != 0 {
		t.Errorf("DocFreq(zebra) = %d, want 0", got)
	}
}

func TestBM25Parameters(t *testing.T) {
	// b = 0: no length normalisation, K(d) = k1 for every doc, so "banana"
	// (tf 1 in a and b) scores idf2 · (k1+1)/(1+k1) = idf2 in both: a tie,
	// broken by doc id.
	ix := build(t, Config{K1: 1.2, B: 0}, tiny)
	idf2 := math.Log(1.6)
	checkHits(t, ix.Search("banana", 10), []Hit{{"a", idf2}, {"b", idf2}})

	// k1 = 2, b = 1: K(c) = 2·4/3; "cherry" in c: idf2 · 3·3/(3 + 8/3) = idf2 · 9/(17/3) = idf2 · 27/17.
	ix2 := build(t, Config{K1: 2, B: 1}, tiny)
	got, err := ix2.Score("cherry", []string{"c"})
	if err != nil {
		t.Fatal(err)
	}
	if want := idf2 * 27 / 17; !near(got[0], want) {
		t.Fatalf("k1=2 b=1: got %v, want %v", got[0], want)
	}
	// WithConfig reaches the same scores as building with that config.
	ix3, err := build(t, DefaultConfig(), tiny).WithConfig(Config{K1: 2, B: 1})
	if err != nil {
		t.Fatal(err)
	}
	if ix3.Config() != (Config{K1: 2, B: 1}) {
		t.Fatalf("Config() = %+v", ix3.Config())
	}
	for _, q := range []string{"cherry", "banana apple", "durian cherry banana"} {
		if a, b := ix2.Search(q, 10), ix3.Search(q, 10); !slices.Equal(a, b) {
			t.Errorf("%q: built %v, WithConfig %v", q, a, b)
		}
	}
}

func TestConfigValidation(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	if c := DefaultConfig(); c.K1 != 1.2 || c.B != 0.75 {
		t.Fatalf("DefaultConfig = %+v", c)
	}
	for _, c := range []Config{{}, {K1: -1, B: 0.5}, {K1: 1.2, B: 1.5}, {K1: 1.2, B: -0.1}, {K1: math.NaN(), B: 0.5}, {K1: math.Inf(1), B: 0.5}, {K1: 1, B: math.NaN()}} {
		if _, err := NewBuilder(c).Build(); err == nil || !strings.Contains(err.Error(), "bm25") {
			t.Errorf("Build with %+v: err = %v, want a bm25 parameter error", c, err)
		}
		if _, err := build(t, DefaultConfig(), tiny).WithConfig(c); err == nil {
			t.Errorf("WithConfig(%+v) accepted", c)
		}
	}
}

func TestBuilderErrors(t *testing.T) {
	b := NewBuilder(DefaultConfig())
	if err := b.Add("", "text"); err == nil {
		t.Error("empty doc id accepted")
	}
	if err := b.Add("x.py:f", "one"); err != nil {
		t.Fatal(err)
	}
	err := b.Add("x.py:f", "two")
	if err == nil || !strings.Contains(err.Error(), `"x.py:f"`) {
		t.Errorf("duplicate id: err = %v, want one naming the id", err)
	}
	if b.Len() != 1 {
		t.Errorf("Len = %d after a rejected duplicate", b.Len())
	}
}

func TestBuilderReusable(t *testing.T) {
	b := NewBuilder(DefaultConfig())
	_ = b.Add("a", "apple")
	ix1, _ := b.Build()
	_ = b.Add("b", "apple banana")
	ix2, _ := b.Build()
	if ix1.Len() != 1 || ix2.Len() != 2 {
		t.Fatalf("Len %d %d", ix1.Len(), ix2.Len())
	}
	if got := ix1.Search("banana", 5); got != nil {
		t.Fatalf("first index changed by later Add: %v", got)
	}
}

func TestEmptyAndUnknown(t *testing.T) {
	ix := build(t, DefaultConfig(), tiny)
	for _, q := range []string{"", "   ", "zebra", "the of and", "x y z", "🙂"} {
		if got := ix.Search(q, 10); got != nil {
			t.Errorf("Search(%q) = %v, want nil", q, got)
		}
		s, err := ix.Score(q, []string{"a", "b"})
		if err != nil || !slices.Equal(s, []float64{0, 0}) {
			t.Errorf("Score(%q) = %v, %v; want [0 0]", q, s, err)
		}
	}
	// Unknown tokens do not disturb known ones.
	checkHits(t, ix.Search("zebra apple unicorn", 10), ix.Search("apple", 10))
	for _, k := range []int{0, -1} {
		if got := ix.Search("apple", k); got != nil {
			t.Errorf("Search(k=%d) = %v, want nil", k, got)
		}
	}

	empty, err := NewBuilder(DefaultConfig()).Build()
	if err != nil {
		t.Fatal(err)
	}
	if empty.Len() != 0 || empty.Search("apple", 10) != nil {
		t.Fatal("empty index should find nothing")
	}
	if s, err := empty.Score("apple", nil); err != nil || len(s) != 0 {
		t.Fatalf("Score on empty index: %v %v", s, err)
	}

	// Documents without tokens count in N and avgdl, and never match.
	ix2 := build(t, DefaultConfig(), map[string]string{"a": "apple", "empty": "", "stop": "the of a"})
	if ix2.Len() != 3 || ix2.AvgDocLen() != 1.0/3 {
		t.Fatalf("Len %d avgdl %v", ix2.Len(), ix2.AvgDocLen())
	}
	if got := ix2.Search("apple", 10); len(got) != 1 || got[0].DocID != "a" {
		t.Fatalf("got %v", got)
	}
	// Every document empty: avgdl 0 must not produce NaN.
	ix3 := build(t, DefaultConfig(), map[string]string{"a": "", "b": "!!"})
	if ix3.Search("apple", 10) != nil {
		t.Fatal("all-empty index matched")
	}
}

func TestKLargerThanCorpus(t *testing.T) {
	ix := build(t, DefaultConfig(), tiny)
	got := ix.Search("apple banana cherry durian", 1000)
	if len(got) != 3 {
		t.Fatalf("got %d hits, want all 3: %v", len(got), got)
	}
	// k cuts the same ranking.
	for k := 1; k <= 3; k++ {
		if top := ix.Search("apple banana cherry durian", k); !slices.Equal(top, got[:k]) {
			t.Errorf("k=%d: %v, want prefix %v", k, top, got[:k])
		}
	}
	// Only matching docs come back even when k exceeds N.
	if got := ix.Search("durian", 1000); len(got) != 1 {
		t.Fatalf("durian: %v", got)
	}
}

func TestTieBreakByDocID(t *testing.T) {
	docs := map[string]string{}
	// Identical documents score identically; order must be doc id ascending
	// (byte order: upper case before lower, "a/b" before "a_b").
	for _, id := range []string{"z.py:f", "a.py:f", "m.py:f", "B.py:f", "a/b.py:f", "a_b.py:f", "a.py:g"} {
		docs[id] = "parse config file"
	}
	docs["other"] = "parse parse parse config file extra words here"
	want := []string{"B.py:f", "a.py:f", "a.py:g", "a/b.py:f", "a_b.py:f", "m.py:f", "z.py:f"}
	for trial := range 5 {
		ix := build(t, DefaultConfig(), docs)
		got := ix.Search("config", 100)
		var ids []string
		for _, h := range got {
			ids = append(ids, h.DocID)
			if h.Score != got[0].Score && h.DocID != "other" {
				t.Fatalf("identical docs scored differently: %v", got)
			}
		}
		ids = slices.DeleteFunc(ids, func(s string) bool { return s == "other" })
		if !slices.Equal(ids, want) {
			t.Fatalf("trial %d: order %q, want %q", trial, ids, want)
		}
		// Partial top-k takes the first in that order.
		top3 := ix.Search("config", 3)
		if top3[0].DocID != "B.py:f" || top3[2].DocID != "a.py:g" {
			t.Fatalf("top 3: %v", top3)
		}
	}
}

func TestRankingDeterministic(t *testing.T) {
	corpus := syntheticCorpus(2000, 7)
	queries := syntheticQueries(50, 8)
	var ref [][]Hit
	for trial := range 3 {
		// Add documents in a different order each time.
		order := rand.New(rand.NewPCG(uint64(trial), 1)).Perm(len(corpus))
		b := NewBuilder(DefaultConfig())
		for _, i := range order {
			if err := b.Add(corpus[i].id, corpus[i].text); err != nil {
				t.Fatal(err)
			}
		}
		ix, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		for qi, q := range queries {
			got := ix.Search(q, 50)
			if trial == 0 {
				ref = append(ref, got)
				checkSorted(t, got)
				continue
			}
			if !slices.Equal(got, ref[qi]) {
				t.Fatalf("trial %d query %q: results differ", trial, q)
			}
		}
	}
}

func checkSorted(t *testing.T, hits []Hit) {
	t.Helper()
	for i := 1; i < len(hits); i++ {
		a, b := hits[i-1], hits[i]
		if a.Score < b.Score || a.Score == b.Score && a.DocID >= b.DocID {
			t.Fatalf("hits %d,%d out of order: %+v %+v", i-1, i, a, b)
		}
	}
	for _, h := range hits {
		if !(h.Score > 0) {
			t.Fatalf("non-positive score %+v", h)
		}
	}
}

// bruteForce scores every document from its token list with the textbook
// formula, independently of the index's data structures.
func bruteForce(cfg Config, docs []synthDoc, query string) []Hit {
	toks := make([][]string, len(docs))
	total := 0
	df := map[string]int{}
	for i, d := range docs {
		toks[i] = Tokenize(d.text)
		total += len(toks[i])
		seen := map[string]bool{}
		for _, tk := range toks[i] {
			if !seen[tk] {
				seen[tk] = true
				df[tk]++
			}
		}
	}
	n := float64(len(docs))
	avgdl := float64(total) / n
	var hits []Hit
	for i, d := range docs {
		tf := map[string]int{}
		for _, tk := range toks[i] {
			tf[tk]++
		}
		score := 0.0
		for _, q := range Tokenize(query) {
			f := float64(tf[q])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[q])+0.5)/(float64(df[q])+0.5))
			score += idf * f * (cfg.K1 + 1) / (f + cfg.K1*(1-cfg.B+cfg.B*float64(len(toks[i]))/avgdl))
		}
		if score > 0 {
			hits = append(hits, Hit{d.id, score})
		}
	}
	slices.SortFunc(hits, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.DocID, b.DocID)
	})
	return hits
}

func TestAgainstBruteForce(t *testing.T) {
	corpus := syntheticCorpus(500, 3)
	for _, cfg := range []Config{DefaultConfig(), {K1: 0.9, B: 0.4}, {K1: 2, B: 0}} {
		b := NewBuilder(cfg)
		for _, d := range corpus {
			if err := b.Add(d.id, d.text); err != nil {
				t.Fatal(err)
			}
		}
		ix, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range syntheticQueries(30, 4) {
			want := bruteForce(cfg, corpus, q)
			got := ix.Search(q, len(corpus))
			if len(got) != len(want) {
				t.Fatalf("%+v %q: %d hits, brute force %d", cfg, q, len(got), len(want))
			}
			for i := range want {
				// Summation order differs, so near-ties may swap; compare scores
				// by document instead of by rank.
				if math.Abs(got[i].Score-want[i].Score) > 1e-9 {
					t.Fatalf("%+v %q rank %d: got %+v, brute force %+v", cfg, q, i, got[i], want[i])
				}
			}
			ids := make([]string, len(want))
			byID := map[string]float64{}
			for i, h := range want {
				ids[i] = h.DocID
				byID[h.DocID] = h.Score
			}
			scores, err := ix.Score(q, ids)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range scores {
				if math.Abs(s-byID[ids[i]]) > 1e-9 {
					t.Fatalf("Score %q %s: %v, brute force %v", q, ids[i], s, byID[ids[i]])
				}
			}
		}
	}
}

func TestScoreMatchesSearch(t *testing.T) {
	corpus := syntheticCorpus(1000, 11)
	ix := buildCorpus(t, corpus)
	for _, q := range syntheticQueries(40, 12) {
		hits := ix.Search(q, 1000)
		ids := make([]string, 0, len(hits)+2)
		for _, h := range hits {
			ids = append(ids, h.DocID)
		}
		// Reverse order, plus a duplicate, to show order is the caller's.
		slices.Reverse(ids)
		ids = append(ids, corpus[0].id, corpus[0].id)
		scores, err := ix.Score(q, ids)
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range hits {
			if s := scores[len(hits)-1-i]; s != h.Score { // exact: same summation
				t.Fatalf("%q %s: Score %v != Search %v", q, h.DocID, s, h.Score)
			}
		}
		if scores[len(ids)-1] != scores[len(ids)-2] {
			t.Fatal("duplicate id scored differently")
		}
	}
}

func TestScoreUnknownDoc(t *testing.T) {
	ix := build(t, DefaultConfig(), tiny)
	_, err := ix.Score("apple", []string{"a", "nope", "b", "gone"})
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), `"gone"`) {
		t.Fatalf("err = %v, want one naming both unknown ids", err)
	}
	many := make([]string, 20)
	for i := range many {
		many[i] = fmt.Sprintf("missing-%d", i)
	}
	_, err = ix.Score("apple", many)
	if err == nil || !strings.Contains(err.Error(), "and 15 more") {
		t.Fatalf("err = %v, want a shortened list", err)
	}
	if !ix.Contains("a") || ix.Contains("nope") || ix.Contains("") {
		t.Fatal("Contains wrong")
	}
}

func TestUnicodeSearch(t *testing.T) {
	ix := build(t, DefaultConfig(), map[string]string{
		"de.py:größeBerechnen": "def größeBerechnen(straße): return len(straße)",
		"el.py:σφάλμα":         "class ΣφάλμαΔικτύου(Exception): pass",
		"zh.py:用户":             "def 获取用户名(用户): return 用户.名字",
		"en.py:size":           "def compute_size(street): return len(street)",
	})
	cases := []struct{ q, want string }{
		{"GRÖSSE berechnen", "de.py:größeBerechnen"}, // found by "berechnen" (see below)
		{"Größe", "de.py:größeBerechnen"},
		{"ΣΦΆΛΜΑ", "el.py:σφάλμα"},
		{"δικτύου σφάλμα", "el.py:σφάλμα"},
		{"获取用户名 出错", "zh.py:用户"},
		{"用户", "zh.py:用户"},
	}
	for _, c := range cases {
		got := ix.Search(c.q, 5)
		if len(got) == 0 || got[0].DocID != c.want {
			t.Errorf("Search(%q) = %v, want %s first", c.q, got, c.want)
		}
	}
	// Lower-casing is the only folding: "grösse" does not match "größe".
	if got := ix.Search("grösse", 5); got != nil {
		t.Errorf("ß was folded to ss: %v", got)
	}
}

func TestConcurrentSearch(t *testing.T) {
	corpus := syntheticCorpus(1000, 21)
	ix := buildCorpus(t, corpus)
	queries := syntheticQueries(64, 22)
	want := make([][]Hit, len(queries))
	for i, q := range queries {
		want[i] = ix.Search(q, 20)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Go(func() {
			for r := range 20 {
				i := (g*7 + r) % len(queries)
				if got := ix.Search(queries[i], 20); !slices.Equal(got, want[i]) {
					errs <- fmt.Sprintf("goroutine %d: %q differs", g, queries[i])
					return
				}
				if _, err := ix.Score(queries[i], []string{corpus[r].id}); err != nil {
					errs <- err.Error()
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func buildCorpus(t testing.TB, corpus []synthDoc) *Index {
	t.Helper()
	b := NewBuilder(DefaultConfig())
	for _, d := range corpus {
		if err := b.Add(d.id, d.text); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return ix
}
