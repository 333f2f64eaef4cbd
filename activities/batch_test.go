package activities

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
)

// RetrieveBatch answers each issue as Retrieve does; an issue Retrieve
// refuses for good gets its error and the others are still answered.
func TestRetrieveBatchAnswersEachIssue(t *testing.T) {
	w := indexWidgets(t)
	env := w.ix.env
	good := RetrieveInput{Repo: w.spec.Name, Issue: "parse config", Params: search.Params{Method: search.MethodSpISR}}
	v, err := env.ExecuteActivity(w.s.Retrieve, good)
	if err != nil {
		t.Fatal(err)
	}
	var alone search.Retrieval
	if err := v.Get(&alone); err != nil {
		t.Fatal(err)
	}
	in := RetrieveBatchInput{Issues: []RetrieveInput{
		good,
		{Repo: "acme/none", Issue: "parse config"},
		{Repo: w.spec.Name, Issue: "parse config", Params: search.Params{Params: spider.Params{K: -1}}},
		good,
	}}
	v, err = env.ExecuteActivity(w.s.RetrieveBatch, in)
	if err != nil {
		t.Fatal(err)
	}
	var out []RetrieveOutcome
	if err := v.Get(&out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 4 {
		t.Fatalf("%d outcomes for 4 issues", len(out))
	}
	want, _ := json.Marshal(alone)
	for _, i := range []int{0, 3} {
		got, _ := json.Marshal(out[i].Retrieval)
		if out[i].Error != "" || string(got) != string(want) {
			t.Errorf("issue %d: %+v, want Retrieve's answer %s", i, out[i], want)
		}
	}
	if out[1].Retrieval != nil || !strings.Contains(out[1].Error, "acme/none") || !strings.Contains(out[1].Error, "not indexed") {
		t.Errorf("issue in a repository not indexed: %+v", out[1])
	}
	if out[2].Retrieval != nil || !strings.Contains(out[2].Error, "-1") {
		t.Errorf("issue with K=-1: %+v", out[2])
	}
}
