package commits

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/testutil/gitfixture"
	"github.com/locus-dev/locus/schema"
)

// TestDamagedPartsDetected damages a published part in the ways a disk, a
// crash or a person can, and checks that readers and VerifyParts name it.
func TestDamagedPartsDetected(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, path string)
		// what notices: reading the rows (nil: depends on where the damage
		// lands), the cheap check, the full check
		read        *bool
		cheap, full bool
		notFound    bool
	}{
		{"truncated", func(t *testing.T, p string) { truncate(t, p, 0.6) }, &yes, true, true, false},
		{"garbage", func(t *testing.T, p string) { overwrite(t, p, []byte(strings.Repeat("garbage ", 100))) }, &yes, true, true, false},
		{"byte flipped inside", flipMiddle, nil, false, true, false},
		{"missing", func(t *testing.T, p string) { os.Remove(p) }, &yes, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gitfixture.New(t)
			for i := 0; i < 4; i++ {
				r.Write(map[string]string{"f.txt": strings.Repeat("line\n", i+1)})
				r.Commit("commit")
			}
			dir := t.TempDir()
			b, err := blob.OpenFile(dir, fileblob.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			_, m := scrapeAndPublish(t, b, r, schema.IndexOptions{CommitsPerPart: 2})
			if len(m.Parts) != 2 || m.Parts[0].SHA256 == "" || m.Parts[0].Bytes == 0 {
				t.Fatalf("parts %+v: want 2 with size and SHA-256", m.Parts)
			}
			ctx := context.Background()
			if err := VerifyParts(ctx, b, m, true); err != nil {
				t.Fatalf("intact parts: %v", err)
			}
			victim := m.Parts[1].Key
			tc.damage(t, filepath.Join(dir, filepath.FromSlash(victim)))

			check := func(what string, err error, want bool) {
				t.Helper()
				if !want {
					if err != nil {
						t.Errorf("%s: %v, want no error (this damage is beyond its reach)", what, err)
					}
					return
				}
				wantErr := blob.ErrCorrupt
				if tc.notFound {
					wantErr = blob.ErrNotFound
				}
				if !errors.Is(err, wantErr) || !strings.Contains(err.Error(), victim) {
					t.Errorf("%s: %v, want an error naming %s and wrapping %v", what, err, victim, wantErr)
				}
			}
			if tc.read != nil {
				check("ReadAll", ReadAll(ctx, b, m, func(*schema.CommitFile) error { return nil }), *tc.read)
			}
			check("VerifyParts (cheap)", VerifyParts(ctx, b, m, false), tc.cheap)
			check("VerifyParts (full)", VerifyParts(ctx, b, m, true), tc.full)
			if err := VerifyPart(ctx, b, m.Parts[0], true); err != nil {
				t.Errorf("the intact part: %v", err)
			}
		})
	}
}

func truncate(t *testing.T, path string, frac float64) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, int64(float64(st.Size())*frac)); err != nil {
		t.Fatal(err)
	}
}

func overwrite(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func flipMiddle(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0xff
	overwrite(t, path, data)
}
