package triplets

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

func sampleRecords() []Record {
	doc := func(id, code string) Doc {
		return Doc{ID: id, File: strings.SplitN(id, ":", 2)[0], Code: code, Hash: CodeHash(code)}
	}
	return []Record{
		{Repo: "acme/w", Commit: "c2", Parent: "c1", Time: 2000, QueryID: "acme/w@c2", Query: "get returns None for a missing key", Source: "commit",
			Positives:     []Doc{doc("pkg/cache.py:Cache.get", "def get(self, key):\n    return self.store[key]\n")},
			PositiveRanks: []int{2}, PositiveScores: []float64{3.5},
			Negatives: []Negative{{Doc: doc("pkg/cache.py:Cache.put", "def put(self, k, v):\n    self.store[k] = v\n"), Source: "bm25", Rank: 1, Score: 4.25},
				{Doc: doc("pkg/keys.py:key_of", "def key_of(e):\n    return e.key\n"), Source: "bm25", Rank: 3, Score: 1.5}}},
		{Repo: "acme/w", Commit: "c4", Parent: "c3", Time: 4000, QueryID: "acme/w@c4", Query: "evict must not raise", Source: "commit",
			Positives:     []Doc{doc("pkg/cache.py:Cache.evict", "def evict(self, key):\n    del self.store[key]\n"), doc("pkg/cache.py:Cache.get", "def get(self, key):\n    return self.store[key]\n")},
			PositiveRanks: []int{1, 0}, PositiveScores: []float64{5, 0},
			Negatives: []Negative{{Doc: doc("pkg/keys.py:key_of", "def key_of(e):\n    return e.key\n"), Source: "bm25", Rank: 4, Score: 0.5}}},
	}
}

func TestPartRoundTripAndDamage(t *testing.T) {
	ctx := context.Background()
	b := blobtest.Bucket(t)
	recs := sampleRecords()
	key := schema.TripletsPartKey("run-1", "acme/w", 0)
	if key != "triplets/run-1/repo=acme+w/part-00000.parquet" {
		t.Errorf("key %q", key)
	}
	info, err := WritePart(ctx, b, key, recs)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadPart(ctx, b, info)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, recs) {
		t.Fatalf("read back\n%+v\nwant\n%+v", back, recs)
	}
	data, _ := b.ReadAll(ctx, key)
	if err := b.WriteAll(ctx, key, data[:len(data)/2]); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadPart(ctx, b, info); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), key) {
		t.Errorf("truncated part: %v", err)
	}
	if _, err := ReadPart(ctx, b, PartInfo{Key: key}); !errors.Is(err, blob.ErrCorrupt) {
		t.Errorf("truncated part, unchecked size: %v", err)
	}
}

func readLines[T any](t *testing.T, path string) []T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var v T
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	return out
}

func TestExportFormats(t *testing.T) {
	recs := sampleRecords()
	dir := t.TempDir()
	files, err := Export(dir, FormatSweRank, recs)
	if err != nil {
		t.Fatal(err)
	}
	sw := readLines[SweRankLine](t, files[0])
	if len(sw) != 3 { // one line per positive
		t.Fatalf("%d swerank lines", len(sw))
	}
	want := SweRankLine{Query: recs[0].Query, PositiveID: "pkg/cache.py:Cache.get", PositiveCode: recs[0].Positives[0].Code, PositiveScore: 3.5, PositiveRank: 2,
		NegativeIDs: []string{"pkg/cache.py:Cache.put", "pkg/keys.py:key_of"}, NegativeCodes: []string{recs[0].Negatives[0].Code, recs[0].Negatives[1].Code},
		NegativeScores: []float64{4.25, 1.5}, NegativeRanks: []int{1, 3}, NegativeSources: []string{"bm25", "bm25"}, Repo: "acme/w", BaseCommit: "c1", InstanceID: "acme/w@c2"}
	if !reflect.DeepEqual(sw[0], want) {
		t.Errorf("swerank line\n%+v\nwant\n%+v", sw[0], want)
	}
	files, err = Export(dir, FormatCornStack, recs)
	if err != nil {
		t.Fatal(err)
	}
	cs := readLines[CornStackLine](t, files[0])
	if len(cs) != 3 || cs[1].Document != recs[1].Positives[0].Code || cs[1].DocumentRank != 1 || len(cs[1].Negatives) != 1 || cs[1].NegativeScores[0] != 0.5 {
		t.Errorf("cornstack %+v", cs)
	}
	files, err = Export(dir, FormatBEIR, recs)
	if err != nil || len(files) != 3 {
		t.Fatalf("beir files %v, %v", files, err)
	}
	corpus := readLines[BEIRDoc](t, filepath.Join(dir, "corpus.jsonl"))
	if len(corpus) != 4 { // get, put, key_of, evict: get and key_of once each
		t.Errorf("corpus %+v", corpus)
	}
	queries := readLines[BEIRQuery](t, filepath.Join(dir, "queries.jsonl"))
	qrels, _ := os.ReadFile(filepath.Join(dir, "qrels", "test.tsv"))
	lines := strings.Split(strings.TrimSpace(string(qrels)), "\n")
	if len(queries) != 2 || lines[0] != "query-id\tcorpus-id\tscore" || len(lines) != 4 || !strings.HasPrefix(lines[1], "acme/w@c2\tpkg/cache.py:Cache.get@") {
		t.Errorf("queries %+v, qrels %q", queries, lines)
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, "\t")
		found := false
		for _, d := range corpus {
			found = found || d.ID == f[1]
		}
		if !found {
			t.Errorf("qrel %q names no corpus document", l)
		}
	}
	if files, err = Export(dir, FormatJSONL, recs); err != nil || len(readLines[Record](t, files[0])) != 2 {
		t.Errorf("jsonl: %v", err)
	}
	if _, err := Export(dir, "csv", recs); err == nil || !strings.Contains(err.Error(), "swerank") {
		t.Errorf("unknown format: %v", err)
	}
}

func TestDedup(t *testing.T) {
	recs := sampleRecords()
	var d Dedup
	if why := d.Keep(&recs[0]); why != "" {
		t.Fatalf("first: %q", why)
	}
	// The second shares a positive (get) but brings a new one (evict): kept.
	if why := d.Keep(&recs[1]); why != "" {
		t.Fatalf("second: %q", why)
	}
	again := sampleRecords()[0]
	again.Query = "Get returns None for a missing key!"
	if why := d.Keep(&again); why != DropDuplicateQuery {
		t.Errorf("near-identical query: %q", why)
	}
	same := sampleRecords()[0]
	same.Query = "another wording"
	if why := d.Keep(&same); why != DropDuplicatePositives {
		t.Errorf("same positive: %q", why)
	}
	// A negative whose code is a positive's elsewhere goes; none left drops.
	r := sampleRecords()[1]
	r.Query, r.Positives = "fresh", []Doc{{ID: "x.py:f", Hash: CodeHash("f")}}
	r.Negatives = []Negative{{Doc: Doc{ID: "pkg/cache.py:Cache.get", Hash: recs[0].Positives[0].Hash}}}
	if why := d.Keep(&r); why != DropNoNegatives {
		t.Errorf("negative that is a positive: %q", why)
	}
	capped := Dedup{MaxPerRepo: 1}
	a, b := sampleRecords()[0], sampleRecords()[1]
	if capped.Keep(&a) != "" || capped.Keep(&b) != DropRepoCap {
		t.Error("the per-repository cap")
	}
	if QueryKey("Bump lib to 1.2.3") != QueryKey("bump  lib to 1.2.4") || QueryKey("a b") == QueryKey("ab") {
		t.Error("QueryKey")
	}
}

func TestWriteStats(t *testing.T) {
	dir := t.TempDir()
	recs := sampleRecords()
	files, err := WriteStats(dir, recs, []RepoStats{{Repo: "acme/w", Stats: Stats{Commits: 10, Records: 3, Excluded: 2, Skipped: map[Skip]int{SkipBot: 4}, ParentMs: 2500, RankMs: 700}},
		{Repo: "broken/r", Error: "no history in the store"}}, map[Skip]int{DropDuplicateQuery: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 6 {
		t.Fatalf("files %v, want stats.md, 4 histograms and the repository bars", files)
	}
	md, _ := os.ReadFile(files[0])
	for _, want := range []string{"2 records from 2 repositories", "| acme/w | 10 | 3 | 2 | 3 | 2 | 0 |  |", "| broken/r | 0 | 0 | 0 | 0 | 0 | 0 | no history in the store |",
		"| python | 2 |", "| bot author | 4 |", "| duplicate query | 1 |", "| reading and parsing parents | 2.5 |", "| ranking and picking negatives | 0.7 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("stats.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range files[1:] {
		data, err := os.ReadFile(f)
		if err != nil || len(data) < 1000 || string(data[1:4]) != "PNG" {
			t.Errorf("%s: %d bytes, %v", f, len(data), err)
		}
	}
}
