package blevepeer

import (
	"path/filepath"
	"testing"
)

func TestPeer(t *testing.T) {
	p := &Peer{}
	if _, err := p.Search([]string{"x"}, 10); err == nil {
		t.Error("search before Index accepted")
	}
	docs := map[string]string{
		"a.py:convert_currency": "a py convert currency convert_currency value rate",
		"a.py:post_entry":       "a py post entry post_entry ledger amount",
		"b.py:balance":          "b py balance ledger sum",
	}
	dir := filepath.Join(t.TempDir(), "ix")
	if err := p.Index(dir, docs); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Index(dir, docs); err == nil {
		t.Error("second Index accepted")
	}
	for _, tc := range []struct {
		tokens []string
		want   []string // ids in order
	}{
		{[]string{"currency", "rate"}, []string{"a.py:convert_currency"}},
		// "ledger" is in two documents; "sum" only in balance, which ranks first.
		{[]string{"ledger", "sum"}, []string{"b.py:balance", "a.py:post_entry"}},
		{[]string{"nothing"}, nil},
	} {
		hits, err := p.Search(tc.tokens, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != len(tc.want) {
			t.Errorf("%v: hits %+v, want %v", tc.tokens, hits, tc.want)
			continue
		}
		for i, h := range hits {
			if h.ID != tc.want[i] || h.Score <= 0 {
				t.Errorf("%v: hit %d %+v, want %s", tc.tokens, i, h, tc.want[i])
			}
		}
	}
}
