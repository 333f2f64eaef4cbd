package commiteval

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// synthHistory is n commits of ~20 words each touching 3 of 2,000 files.
func synthHistory(n int) ([]Commit, State) {
	r := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 3000)
	for i := range words {
		words[i] = fmt.Sprintf("w%dx", i)
	}
	z := rand.NewZipf(r, 1.1, 2, uint64(len(words)-1))
	var files []string
	ids := map[string]string{}
	for i := range 2000 {
		p := fmt.Sprintf("src/f%d.c", i)
		files = append(files, p)
		ids[fmt.Sprint(i)] = p
	}
	cs := make([]Commit, n)
	for i := range cs {
		var sb strings.Builder
		for range 20 {
			sb.WriteString(words[z.Uint64()])
			sb.WriteByte(' ')
		}
		c := Commit{ID: fmt.Sprintf("%040d", i), Time: int64(1000 + i), Message: sb.String()}
		for range 3 {
			f := r.IntN(2000)
			c.Files = append(c.Files, FileChange{Path: files[f], FileID: fmt.Sprint(f)})
		}
		cs[i] = c
	}
	return cs, NewState(files, ids)
}

// BenchmarkSearchAll: 100 queries over a 15,000-commit history (kafka-sized),
// per op. The exact index is rebuilt once per query.
func BenchmarkSearchAll(b *testing.B) {
	cs, st := synthHistory(15000)
	var qs []Query
	for i := range 100 {
		qs = append(qs, Query{Text: cs[(i*137)%len(cs)].Message, Time: int64(1000 + 5000 + i*100), State: st})
	}
	for _, shared := range []bool{false, true} {
		b.Run(fmt.Sprintf("shared=%v", shared), func(b *testing.B) {
			for b.Loop() {
				opt := DefaultOptions()
				opt.SharedIndex = shared
				e, err := New(cs, opt)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.SearchAll(qs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
