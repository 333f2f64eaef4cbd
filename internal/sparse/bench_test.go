package sparse

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

type synthDoc struct{ id, text string }

var syllables = []string{
	"ba", "co", "da", "fe", "gi", "ho", "ju", "ka", "le", "mi", "no", "pa", "qui", "ro", "su",
	"ta", "ve", "wi", "xo", "ya", "ze", "str", "con", "fig", "par", "ser", "tok", "req", "resp", "han",
}

var english = []string{
	"the", "when", "calling", "returns", "wrong", "value", "instead", "of", "error", "raised",
	"should", "expected", "but", "got", "after", "update", "fails", "with", "empty", "list",
	"a", "is", "not", "in", "on", "crash", "missing", "none", "null", "behaviour",
}

// vocab builds n distinct pseudo-words, deterministic for n.
func vocab(n int, r *rand.Rand) []string {
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var sb strings.Builder
		for range 2 + r.IntN(2) {
			sb.WriteString(syllables[r.IntN(len(syllables))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// ident joins 1–3 words in a random naming convention.
func ident(r *rand.Rand, words []string, z *rand.Zipf) string {
	parts := make([]string, 1+r.IntN(3))
	for i := range parts {
		parts[i] = words[z.Uint64()]
	}
	switch r.IntN(4) {
	case 0: // snake_case
		return strings.Join(parts, "_")
	case 1: // camelCase
		for i := 1; i < len(parts); i++ {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		return strings.Join(parts, "")
	case 2: // PascalCase
		for i := range parts {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
		return strings.Join(parts, "")
	default:
		return parts[0]
	}
}

// synthVocab is the corpus's vocabulary: 5,000 words and 30,000 identifiers
// made of them. Real code reuses identifiers heavily (the Go standard
// library's first 20,000 functions hold about 58,000 distinct terms); drawing
// every identifier afresh would inflate the dictionary several times over.
func synthVocab() (words, idents []string) {
	r := rand.New(rand.NewPCG(0, 0))
	words = vocab(5000, r)
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	idents = make([]string, 30000)
	for i := range idents {
		idents[i] = ident(r, words, z)
	}
	return words, idents
}

// syntheticCorpus returns n function documents shaped like locus's (path
// line, signature, body): Zipf-distributed words and identifiers, lengths
// from about 10 to 500 tokens.
func syntheticCorpus(n int, seed uint64) []synthDoc {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	words, idents := synthVocab()
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	zi := rand.NewZipf(r, 1.05, 8, uint64(len(idents)-1))
	id := func() string { return idents[zi.Uint64()] }
	docs := make([]synthDoc, n)
	for i := range docs {
		dir := words[i%97] + "/" + words[(i/97)%89]
		file := words[(i*31)%len(words)]
		fn := ident(r, words, z)
		path := fmt.Sprintf("src/%s/%s.py", dir, file)
		var sb strings.Builder
		fmt.Fprintf(&sb, "%s\ndef %s(self, %s, %s):\n", path, fn, id(), id())
		// Skewed line count: many short functions, a few long ones.
		lines := 1 + int(float64(r.IntN(40))*r.Float64()*r.Float64()*3)
		for range lines {
			switch r.IntN(4) {
			case 0:
				fmt.Fprintf(&sb, "    %s = self.%s(%s, %d)\n", id(), id(), id(), r.IntN(1000))
			case 1:
				fmt.Fprintf(&sb, "    if %s.%s(): return %s\n", id(), id(), id())
			case 2:
				fmt.Fprintf(&sb, "    # %s %s %s the %s\n", english[r.IntN(len(english))], words[z.Uint64()], english[r.IntN(len(english))], words[z.Uint64()])
			default:
				fmt.Fprintf(&sb, "    for %s in %s.%s: %s.append(%s)\n", id(), id(), id(), id(), id())
			}
		}
		docs[i] = synthDoc{id: fmt.Sprintf("%s:%s_%d", path, fn, i), text: sb.String()}
	}
	return docs
}

// syntheticQueries returns issue-like queries of 8–40 words mixing English
// and identifiers from the same vocabulary as syntheticCorpus.
func syntheticQueries(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 0x9e4))
	words, idents := synthVocab()
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	zi := rand.NewZipf(r, 1.05, 8, uint64(len(idents)-1))
	qs := make([]string, n)
	for i := range qs {
		var parts []string
		for range 8 + r.IntN(33) {
			switch r.IntN(6) {
			case 0:
				parts = append(parts, idents[zi.Uint64()])
			case 1:
				parts = append(parts, words[z.Uint64()])
			default:
				parts = append(parts, english[r.IntN(len(english))])
			}
		}
		qs[i] = strings.Join(parts, " ")
	}
	return qs
}

func BenchmarkSearch(b *testing.B) {
	corpus := syntheticCorpus(20000, 1)
	ix := buildCorpus(b, corpus)
	queries := syntheticQueries(1000, 2)
	b.Logf("corpus: %d docs, %d terms, avgdl %.1f tokens, %d postings bytes", ix.Len(), ix.NumTerms(), ix.AvgDocLen(), len(ix.postings))
	for _, k := range []int{10, 500} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			lat := make([]time.Duration, 0, 1<<16)
			i := 0
			for b.Loop() {
				t0 := time.Now()
				ix.Search(queries[i%len(queries)], k)
				lat = append(lat, time.Since(t0))
				i++
			}
			reportPercentiles(b, lat)
		})
	}
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Nanoseconds())
	}
	b.ReportMetric(pct(0.50), "p50-ns")
	b.ReportMetric(pct(0.99), "p99-ns")
}

func BenchmarkBuild(b *testing.B) {
	corpus := syntheticCorpus(20000, 1)
	for b.Loop() {
		buildCorpus(b, corpus)
	}
}

func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{10000, 20000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			benchLoad(b, buildCorpus(b, syntheticCorpus(n, 1)))
		})
	}
}

// benchLoad measures Load of ix from a file bucket (read + decode).
func benchLoad(b *testing.B, ix *Index) {
	ctx := context.Background()
	bucket := testBucket(b)
	const key = "repos/x/sparse/abc/functions.bm25"
	if err := Write(ctx, bucket, key, ix); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(ix.Size())
	b.Logf("%d docs, %d terms, %d postings bytes, file %d bytes", ix.Len(), ix.NumTerms(), len(ix.postings), ix.Size())
	for b.Loop() {
		if _, err := Load(ctx, bucket, key); err != nil {
			b.Fatal(err)
		}
	}
	// After the loop: b.Loop's first call drops metrics reported earlier.
	b.ReportMetric(float64(ix.Size()), "file-bytes")
}

func BenchmarkDecode(b *testing.B) {
	ix := buildCorpus(b, syntheticCorpus(10000, 1))
	var sb strings.Builder
	if _, err := ix.WriteTo(&sb); err != nil {
		b.Fatal(err)
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data); err != nil {
			b.Fatal(err)
		}
	}
}
