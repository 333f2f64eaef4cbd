package blob

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/blob/s3blob"
)

func TestValidateKey(t *testing.T) {
	valid := []string{"a", "a/b", "repos/o/n/commits/part-1-2.parquet", "a..b", ".hidden", "ünï/☃", "a b", strings.Repeat("x", MaxKeyLen)}
	for _, k := range valid {
		if err := ValidateKey(k); err != nil {
			t.Errorf("ValidateKey(%q) = %v", k, err)
		}
	}
	invalid := []string{"", "/a", "a/", "a//b", ".", "..", "./a", "a/.", "a/../b", `a\b`, "a\x00", "a\tb", "a\x7f", "\xc3", strings.Repeat("x", MaxKeyLen+1)}
	for _, k := range invalid {
		err := ValidateKey(k)
		if !errors.Is(err, ErrInvalidKey) || !strings.Contains(err.Error(), fmt.Sprintf("%q", k)) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}

func TestValidatePrefix(t *testing.T) {
	for _, p := range []string{"", "a", "a/", "a/b", "a/b/", "a/par"} {
		if err := ValidatePrefix(p); err != nil {
			t.Errorf("ValidatePrefix(%q) = %v", p, err)
		}
	}
	for _, p := range []string{"/", "/a", "a//", "a//b", "../", "./", "a/../", `a\`} {
		if err := ValidatePrefix(p); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidatePrefix(%q) = %v, want ErrInvalidKey", p, err)
		}
	}
}

func TestOpenFileForms(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	abs := filepath.Join(dir, "abs")
	for u, root := range map[string]string{"file://" + abs: abs, abs: abs, "rel/plain": filepath.Join(dir, "rel/plain"),
		"file://./rel/url": filepath.Join(dir, "rel/url"), "file://localhost" + abs: abs} {
		b, err := Open(t.Context(), u)
		if err != nil {
			t.Errorf("Open(%q): %v", u, err)
			continue
		}
		if err := b.WriteAll(t.Context(), "k", []byte("v")); err != nil {
			t.Errorf("Open(%q): write: %v", u, err)
		}
		// Where a person opens a key: the absolute path, whatever the form.
		if got, want := b.Location("runs/r1/summary.json"), filepath.Join(root, "runs", "r1", "summary.json"); got != want {
			t.Errorf("Open(%q).Location = %q, want %q", u, got, want)
		}
		b.Close()
	}
	for _, p := range []string{"abs/k", "rel/plain/k", "rel/url/k"} {
		if ok, _ := filepath.Glob(filepath.Join(dir, p)); len(ok) != 1 {
			t.Errorf("expected object file %s", p)
		}
	}
}

func TestOpenErrors(t *testing.T) {
	for _, u := range []string{
		"", "ftp://host/x", "file://host/x", "file:///x?sync=1", "file://",
		"s3://", "s3://b?bogus=1", "s3://b?path_style=maybe", "s3://b?endpoint=localhost:9000",
		"s3://b?region=a&region=b", "s3://b/a//b",
	} {
		if b, err := Open(t.Context(), u); err == nil {
			b.Close()
			t.Errorf("Open(%q) succeeded", u)
		} else if u != "" && !strings.Contains(err.Error(), u) {
			t.Errorf("Open(%q) error %q does not name the URL", u, err)
		}
	}
}

func TestS3Options(t *testing.T) {
	u, err := url.Parse("s3://bkt/runs/x/?endpoint=http://127.0.0.1:9000&region=eu-west-1&path_style=true")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s3Options(u)
	if err != nil {
		t.Fatal(err)
	}
	want := s3blob.Options{Bucket: "bkt", Prefix: "runs/x", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-1", PathStyle: true}
	if got != want {
		t.Errorf("s3Options = %+v, want %+v", got, want)
	}
}

func TestLocationS3(t *testing.T) {
	for u, want := range map[string]string{
		"s3://bkt/pre/fix?region=us-east-1&endpoint=http://127.0.0.1:1": "s3://bkt/pre/fix/runs/r1/summary.json",
		"s3://bkt?region=us-east-1&endpoint=http://127.0.0.1:1":         "s3://bkt/runs/r1/summary.json",
	} {
		b, err := Open(t.Context(), u)
		if err != nil {
			t.Fatalf("Open(%q): %v", u, err)
		}
		if got := b.Location("runs/r1/summary.json"); got != want {
			t.Errorf("Open(%q).Location = %q, want %q", u, got, want)
		}
		b.Close()
	}
}
