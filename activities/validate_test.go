package activities

import (
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/internal/search"
	"github.com/locus-dev/locus/internal/spider"
	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/internal/vectors"
	"github.com/locus-dev/locus/schema"
)

// A permanent sync failure reads as one message: no "permanent" marker and
// no cause chain repeating it.
func TestPermanentErrorsReadOnce(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Git{CloneDir: t.TempDir(), HostQueue: "q", Bucket: blobtest.Bucket(t)}
	env.RegisterActivity(a)
	for _, tc := range []struct{ name, url, want string }{
		{"not a repository", t.TempDir(), "not a git repository"},
		{"missing path", "/nonexistent/locus-test/repo", "repository path"},
		{"empty url", "", "repository URL is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := env.ExecuteActivity(a.Sync, schema.SyncInput{Repo: schema.RepoSpec{Name: "acme/x", URL: tc.url}})
			var ae *temporal.ApplicationError
			if !errors.As(err, &ae) || !ae.NonRetryable() {
				t.Fatalf("err = %v, want non-retryable", err)
			}
			msg := ae.Message()
			if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "sync acme/x: ") {
				t.Errorf("message %q, want it to name %q", msg, tc.want)
			}
			if strings.Contains(msg, "permanent") || strings.Contains(ae.Error(), ": permanent") {
				t.Errorf("message %q / error %q carries the permanent marker", msg, ae.Error())
			}
			if strings.Count(ae.Error(), tc.want) != 1 {
				t.Errorf("error %q says %q more than once", ae.Error(), tc.want)
			}
		})
	}
}

// Parameters no query can satisfy fail at once, whoever started the query.
func TestRetrieveRejectsBadParams(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	a := &Search{}
	env.RegisterActivity(a)
	for _, tc := range []struct {
		name string
		p    spider.Params
		want string
	}{
		{"negative k", spider.Params{K: -1}, "budget K = -1"},
		{"negative n", spider.Params{N: -5}, "pool N = -5"},
		{"n below k", spider.Params{K: 30, N: 10}, "smaller than budget"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := env.ExecuteActivity(a.Retrieve, RetrieveInput{Repo: "acme/x", Issue: "bug", Params: search.Params{Params: tc.p}})
			var ae *temporal.ApplicationError
			if !errors.As(err, &ae) || !ae.NonRetryable() || ae.Type() != ErrTypeBadInput || !strings.Contains(ae.Message(), tc.want) {
				t.Fatalf("err = %v, want a non-retryable %s naming %q", err, ErrTypeBadInput, tc.want)
			}
		})
	}
}

type stringerIndex struct{ vectors.Index }

func (stringerIndex) String() string { return "milvus://db:19530/locus" }

type otherIndex struct{ vectors.Index }

func TestVectorStoreName(t *testing.T) {
	for _, tc := range []struct {
		ix   vectors.Index
		want string
	}{
		{nil, "local"},
		{&vectors.Local{}, "local"},
		{stringerIndex{}, "milvus://db:19530/locus"},
		{otherIndex{}, "activities"},
	} {
		if got := vectorStore(tc.ix); got != tc.want {
			t.Errorf("vectorStore(%T) = %q, want %q", tc.ix, got, tc.want)
		}
	}
}
