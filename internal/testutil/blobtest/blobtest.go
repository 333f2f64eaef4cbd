// Package blobtest gives tests an empty object store in a temporary directory.
package blobtest

import (
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
)

// Bucket returns an empty file-backed bucket that is closed when the test ends.
func Bucket(t testing.TB) *blob.Bucket {
	t.Helper()
	b, err := blob.OpenFile(t.TempDir(), fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}
