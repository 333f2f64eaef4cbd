package activities

import (
	"errors"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/locus-dev/locus/internal/testutil/blobtest"
	"github.com/locus-dev/locus/schema"
)

func TestSyncRejectsEscapingNames(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	b := blobtest.Bucket(t)
	a := &Git{CloneDir: filepath.Join(t.TempDir(), "clones"), HostQueue: "q", Bucket: b}
	env.RegisterActivity(a)
	for _, name := range []string{"../../etc", "/abs", "a/b/c", "ok/..", ""} {
		_, err := env.ExecuteActivity(a.Sync, schema.SyncInput{Repo: schema.RepoSpec{Name: schema.RepoName(name), URL: "/nowhere"}})
		var appErr *temporal.ApplicationError
		if !errors.As(err, &appErr) || !appErr.NonRetryable() || appErr.Type() != ErrTypeBadInput {
			t.Errorf("name %q: err = %v, want a non-retryable %s error", name, err, ErrTypeBadInput)
		}
	}
}

func TestSyncNotARepositoryIsPermanent(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	b := blobtest.Bucket(t)
	a := &Git{CloneDir: t.TempDir(), HostQueue: "q", Bucket: b}
	env.RegisterActivity(a)
	notRepo := t.TempDir()
	_, err := env.ExecuteActivity(a.Sync, schema.SyncInput{Repo: schema.RepoSpec{Name: "acme/x", URL: notRepo}})
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || !appErr.NonRetryable() {
		t.Fatalf("err = %v, want non-retryable", err)
	}
}
