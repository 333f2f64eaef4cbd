package s3blob_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/drivertest"
	"github.com/locus-dev/locus/internal/blob/s3blob"
	"github.com/locus-dev/locus/internal/testutil/s3server"
)

func open(t *testing.T, srv *s3server.Server, bucket, prefix string) *blob.Bucket {
	t.Helper()
	b, err := blob.OpenS3(t.Context(), s3blob.Options{
		Bucket:          bucket,
		Prefix:          prefix,
		Endpoint:        srv.Endpoint,
		Region:          s3server.Region,
		PathStyle:       true,
		AccessKeyID:     srv.AccessKey,
		SecretAccessKey: srv.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// noPendingUploads checks that aborted writes left no multipart uploads,
// which would hold storage although invisible.
func noPendingUploads(t *testing.T, srv *s3server.Server, bucket string) {
	t.Helper()
	// t.Context is already cancelled when cleanups run.
	out, err := srv.Client().ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
	if err != nil {
		t.Errorf("ListMultipartUploads: %v", err)
		return
	}
	for _, u := range out.Uploads {
		t.Errorf("multipart upload left behind: key %s id %s", aws.ToString(u.Key), aws.ToString(u.UploadId))
	}
}

func listKeys(t *testing.T, b *blob.Bucket, prefix string) []string {
	t.Helper()
	objs, err := b.List(t.Context(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return keys
}

func TestS3(t *testing.T) {
	srv := s3server.Start(t)

	// A key prefix exercises the driver's key mapping in every operation.
	t.Run("Conformance", func(t *testing.T) {
		drivertest.RunConformanceTests(t, func(t *testing.T) *blob.Bucket {
			bucket := srv.NewBucket(t)
			t.Cleanup(func() { noPendingUploads(t, srv, bucket) })
			return open(t, srv, bucket, "tenant/a")
		})
	})

	t.Run("PrefixIsolation", func(t *testing.T) {
		ctx := t.Context()
		bucket := srv.NewBucket(t)
		whole, p1, p2 := open(t, srv, bucket, ""), open(t, srv, bucket, "p1"), open(t, srv, bucket, "/p2/")
		for _, b := range []*blob.Bucket{whole, p1, p2} {
			if err := b.WriteAll(ctx, "k", []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if got := listKeys(t, whole, ""); !slices.Equal(got, []string{"k", "p1/k", "p2/k"}) {
			t.Errorf("unprefixed List = %q", got)
		}
		if got := listKeys(t, p1, ""); !slices.Equal(got, []string{"k"}) {
			t.Errorf("prefixed List = %q", got)
		}
		if err := p1.Delete(ctx, "k"); err != nil {
			t.Fatal(err)
		}
		if ok, _ := p2.Exists(ctx, "k"); !ok {
			t.Error("deleting p1/k removed p2/k")
		}
	})

	t.Run("SkipsUnaddressableKeys", func(t *testing.T) {
		bucket := srv.NewBucket(t)
		for _, k := range []string{"dir/", `back\slash`, "ok"} {
			_, err := srv.Client().PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(k)})
			if err != nil {
				t.Fatalf("PutObject(%q): %v", k, err)
			}
		}
		if got := listKeys(t, open(t, srv, bucket, ""), ""); !slices.Equal(got, []string{"ok"}) {
			t.Errorf("List = %q, want [ok]", got)
		}
	})

	t.Run("OpenURL", func(t *testing.T) {
		ctx := t.Context()
		bucket := srv.NewBucket(t)
		// Credentials travel through the default chain, never the URL.
		t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
		t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
		t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
		t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
		b, err := blob.Open(ctx, srv.URL(bucket, "runs/x"))
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if err := b.WriteAll(ctx, "result.json", []byte("{}")); err != nil {
			t.Fatal(err)
		}
		if got := listKeys(t, open(t, srv, bucket, ""), ""); !slices.Equal(got, []string{"runs/x/result.json"}) {
			t.Errorf("object stored as %q, want runs/x/result.json", got)
		}
	})

	t.Run("WrongCredentials", func(t *testing.T) {
		b, err := blob.OpenS3(t.Context(), s3blob.Options{
			Bucket: srv.Bucket, Endpoint: srv.Endpoint, PathStyle: true,
			AccessKeyID: srv.AccessKey, SecretAccessKey: "wrong",
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = b.ReadAll(t.Context(), "k")
		if err == nil || errors.Is(err, blob.ErrNotFound) {
			t.Errorf("ReadAll with a wrong secret: %v, want an access error", err)
		}
	})
}
