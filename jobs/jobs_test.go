package jobs

import (
	"testing"

	"github.com/locus-dev/locus/schema"
)

func TestFleetIDIsStable(t *testing.T) {
	in := schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: "a/b", URL: "/x"}}}
	same := schema.IndexFleetInput{Repos: []schema.RepoSpec{{Name: "a/b", URL: "/x"}}}
	if FleetID(in) != FleetID(same) || FleetID(in) == FleetID(schema.IndexFleetInput{}) {
		t.Fatal("fleet ids must be deterministic and depend on the input")
	}
}
