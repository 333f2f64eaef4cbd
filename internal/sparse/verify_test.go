package sparse

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
)

// TestLoadVerified: the size and SHA-256 recorded in the manifest catch
// every change to the stored index, including ones the format's own checks
// cannot see (another valid index under the key, a flipped version field),
// and each is blob.ErrCorrupt naming the key.
func TestLoadVerified(t *testing.T) {
	ctx := context.Background()
	bucket := testBucket(t)
	data := encode(t, build(t, DefaultConfig(), tiny))
	other := encode(t, build(t, DefaultConfig(), map[string]string{"x.py:f": "other index"}))
	h := sha256.Sum256(data)
	size, sum := int64(len(data)), hex.EncodeToString(h[:])
	flipped := slices.Clone(data)
	flipped[9] ^= 0x40 // format version
	for _, tc := range []struct {
		name      string
		stored    []byte // nil: nothing stored
		size      int64
		sum       string
		wantErr   error
		wantInMsg string
	}{
		{"intact", data, size, sum, nil, ""},
		{"intact, nothing recorded (older manifest)", data, 0, "", nil, ""},
		{"truncated", data[:len(data)/2], size, sum, blob.ErrCorrupt, "bytes, the manifest recorded"},
		{"truncated, nothing recorded", data[:len(data)/2], 0, "", blob.ErrCorrupt, "truncated"},
		{"another valid index", other, 0, sum, blob.ErrCorrupt, "SHA-256"},
		{"version field flipped", flipped, size, sum, blob.ErrCorrupt, "SHA-256"},
		{"garbage", []byte("garbage garbage garbage"), 0, "", blob.ErrCorrupt, "bad magic"},
		{"missing", nil, size, sum, blob.ErrNotFound, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := "repos/acme/widgets/sparse/" + strings.ReplaceAll(tc.name, " ", "-") + "/functions.bm25"
			if tc.stored != nil {
				if err := bucket.WriteAll(ctx, key, tc.stored); err != nil {
					t.Fatal(err)
				}
			}
			ix, err := LoadVerified(ctx, bucket, key, tc.size, tc.sum)
			if tc.wantErr == nil {
				if err != nil || ix.Len() != len(tiny) {
					t.Fatalf("LoadVerified = %v; want the %d documents", err, len(tiny))
				}
				return
			}
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), tc.wantInMsg) {
				t.Fatalf("LoadVerified error = %v; want %v naming %s and saying %q", err, tc.wantErr, key, tc.wantInMsg)
			}
		})
	}
}

// TestDigest: Digest reports what was written and refuses a damaged index.
func TestDigest(t *testing.T) {
	ctx := context.Background()
	bucket := testBucket(t)
	if err := Write(ctx, bucket, testKey, build(t, DefaultConfig(), tiny)); err != nil {
		t.Fatal(err)
	}
	data, err := bucket.ReadAll(ctx, testKey)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(data)
	size, sum, err := Digest(ctx, bucket, testKey)
	if err != nil || size != int64(len(data)) || sum != hex.EncodeToString(h[:]) {
		t.Fatalf("Digest = %d, %s, %v; want %d, %x", size, sum, err, len(data), h)
	}
	if err := bucket.WriteAll(ctx, testKey, data[:len(data)-1]); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Digest(ctx, bucket, testKey); !errors.Is(err, blob.ErrCorrupt) || !strings.Contains(err.Error(), testKey) {
		t.Fatalf("Digest of a truncated index: %v, want blob.ErrCorrupt naming the key", err)
	}
}
