package commiteval

import (
	"math"
	"testing"

	"github.com/locus-dev/locus/internal/memory"
	"github.com/locus-dev/locus/internal/spider"
)

func scoreOf(s []spider.Scored, id string) (float64, bool) {
	for _, x := range s {
		if x.ID == id {
			return x.Score, true
		}
	}
	return 0, false
}

// TestMemory: the three file-level memory rankings see only commits older
// than the query, only files of its state (renamed ones under their name
// there), and compute what their documentation says.
func TestMemory(t *testing.T) {
	e := engines(t)["exact"]
	q := Query{Text: "parser crash", Time: 500, State: state()}
	m, err := e.Memory(q, MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hits, _ := e.Commits(q.Text, q.Time) // c3, c1, c2
	score := map[string]float64{}
	for _, h := range hits {
		score[h.ID] = h.Score
	}
	vote := func(id string, age int64, n int) float64 {
		return memory.Vote(score[id], age*1000, 365, n)
	}
	// lexer.c: c3 (2 files, age 200 s), c1 as parser.c (2 files), c2 (1 file).
	wantLexer := vote("c3", 200, 2) + vote("c1", 400, 2) + vote("c2", 300, 1)
	wantUtil := vote("c1", 400, 2)
	for _, tc := range []struct {
		name string
		rank []spider.Scored
		want map[string]float64
	}{
		{"maxp", m.MaxP, map[string]float64{"lexer.c": score["c3"], "util.c": score["c1"]}},
		{"votes", m.Votes, map[string]float64{"lexer.c": wantLexer, "util.c": wantUtil}},
	} {
		if len(tc.rank) != len(tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.rank, tc.want)
		}
		for id, w := range tc.want {
			if got, ok := scoreOf(tc.rank, id); !ok || math.Abs(got-w) > 1e-9 {
				t.Errorf("%s: %s scores %v (present %v), want %v", tc.name, id, got, ok, w)
			}
		}
	}
	// Docs: lexer.c's document is the messages of c1, c2, c3 (and not q's
	// or c6's); util.c's is c1's; old.c and future.c do not exist at the state.
	if len(m.Docs) != 2 || m.Docs[0].ID != "lexer.c" || m.Docs[1].ID != "util.c" {
		t.Fatalf("docs = %v, want lexer.c then util.c", m.Docs)
	}
	// Two documents, both holding "parser" and "crash": idf = ln(1 + 0.5/2.5);
	// a document's length is the tokens of its messages.
	lexLen, utilLen := 0, 0
	for _, id := range []string{"c1", "c2", "c3"} {
		n := e.tokens(e.byID[id]).length
		lexLen += n
		if id == "c1" {
			utilLen = n
		}
	}
	avg := float64(lexLen+utilLen) / 2
	idf := math.Log(1 + 0.5/2.5)
	bm := func(tf float64, dl int) float64 {
		norm := 1.2 * (1 - 0.75 + 0.75*float64(dl)/avg)
		return idf * tf * 2.2 / (tf + norm)
	}
	// lexer.c: "parser" in c1, c2, c3 (3), "crash" in c1, c3 (2); util.c: 1 and 1.
	if want := bm(3, lexLen) + bm(2, lexLen); math.Abs(m.Docs[0].Score-want) > 1e-9 {
		t.Errorf("lexer.c doc score %v, want %v", m.Docs[0].Score, want)
	}
	if want := 2 * bm(1, utilLen); math.Abs(m.Docs[1].Score-want) > 1e-9 {
		t.Errorf("util.c doc score %v, want %v", m.Docs[1].Score, want)
	}
	// Nothing before the first commit.
	if m, err := e.Memory(Query{Text: "parser", Time: 100, State: state()}, MemoryOptions{}); err != nil || len(m.MaxP)+len(m.Votes)+len(m.Docs) != 0 {
		t.Errorf("memory before the first commit: %+v, %v", m, err)
	}
}
