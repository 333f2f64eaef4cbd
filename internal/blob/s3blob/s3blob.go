//lint:file-ignore SA1019 feature/s3/manager's Uploader is deprecated in favour of feature/s3/transfermanager, which is still v0.x; the Uploader passes the conformance suite (100 MiB streaming with bounded memory, abort that removes uploaded parts), so it stays until transfermanager is stable.

// Package s3blob stores blob objects in an S3 bucket through aws-sdk-go-v2.
package s3blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/locus-dev/locus/internal/blob/driver"
)

const (
	// DefaultRegion is used when neither Options nor the AWS config name one.
	DefaultRegion = "us-east-1"
	// DefaultPartSize keeps a streaming write's memory small while allowing
	// objects up to 80 GB within S3's 10,000-part limit.
	DefaultPartSize = 8 << 20
	// DefaultConcurrency is the number of parts in flight per write.
	DefaultConcurrency = 2
	// abortTimeout bounds cleanup of a failed multipart upload, which runs
	// even after the caller's context is gone.
	abortTimeout = 30 * time.Second
)

// Options configures an S3 bucket.
type Options struct {
	// Bucket is the S3 bucket name. Required.
	Bucket string
	// Prefix is prepended, with a "/", to every key so that one bucket can
	// hold several stores. Default "": keys are stored as given.
	Prefix string
	// Endpoint is the base URL of a non-AWS server, e.g. "http://127.0.0.1:7070".
	// Default "": AWS's endpoint for Region.
	Endpoint string
	// Region signs requests. Default: AWS_REGION or the shared config, else DefaultRegion.
	Region string
	// PathStyle addresses objects as endpoint/bucket/key instead of
	// bucket.endpoint/key; most non-AWS servers need it. Default false.
	PathStyle bool
	// AccessKeyID and SecretAccessKey, when set (both or neither), replace the
	// default credential chain (AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY,
	// shared files, instance roles). Default "".
	AccessKeyID, SecretAccessKey string
	// PartSize is the multipart part size in bytes; each open Writer buffers
	// up to about (Concurrency+2)×PartSize. Default DefaultPartSize; minimum 5 MiB.
	PartSize int64
	// Concurrency is the number of parts uploaded in parallel per Writer.
	// Default DefaultConcurrency.
	Concurrency int
}

// Bucket is a driver.Bucket over one S3 bucket and key prefix.
type Bucket struct {
	client   *s3.Client
	uploader *manager.Uploader
	bucket   string
	prefix   string // "" or ends with "/"
}

var _ driver.Bucket = (*Bucket)(nil)

// Open builds a client from opts and the AWS default config. It makes no
// request, so a wrong bucket or credentials show up on first use.
func Open(ctx context.Context, opts Options) (*Bucket, error) {
	if opts.Bucket == "" {
		return nil, errors.New("s3blob: bucket name is required")
	}
	if (opts.AccessKeyID == "") != (opts.SecretAccessKey == "") {
		return nil, errors.New("s3blob: set both AccessKeyID and SecretAccessKey, or neither")
	}
	if opts.PartSize == 0 {
		opts.PartSize = DefaultPartSize
	}
	if opts.PartSize < manager.MinUploadPartSize {
		return nil, fmt.Errorf("s3blob: PartSize %d is below S3's minimum %d", opts.PartSize, manager.MinUploadPartSize)
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = DefaultConcurrency
	}
	var load []func(*config.LoadOptions) error
	if opts.Region != "" {
		load = append(load, config.WithRegion(opts.Region))
	}
	if opts.AccessKeyID != "" {
		load = append(load, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(opts.AccessKeyID, opts.SecretAccessKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("s3blob: load AWS config: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = DefaultRegion
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.UsePathStyle = opts.PathStyle
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
			// Many S3-compatible servers reject the SDK's default CRC trailers
			// (aws-chunked bodies); send checksums only where S3 requires them.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
	uploader := manager.NewUploader(client, func(u *manager.Uploader) {
		u.PartSize = opts.PartSize
		u.Concurrency = opts.Concurrency
		// The uploader aborts with the caller's context, which is already
		// cancelled in the case that matters; we abort ourselves instead.
		u.LeavePartsOnError = true
	})
	prefix := strings.Trim(opts.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &Bucket{client: client, uploader: uploader, bucket: opts.Bucket, prefix: prefix}, nil
}

// Close does nothing: the SDK client holds no resources that need releasing.
func (b *Bucket) Close() error { return nil }

func (b *Bucket) s3Key(key string) *string { return aws.String(b.prefix + key) }

// mapErr reports a missing object as driver.ErrNotFound; HEAD responses have
// no body, so a missing key there is only a 404 "NotFound".
func mapErr(err error) error {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return driver.ErrNotFound
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound") {
		return driver.ErrNotFound
	}
	return err
}

func isInvalidRange(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) && ae.ErrorCode() == "InvalidRange" {
		return true
	}
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusRequestedRangeNotSatisfiable
}

// NewWriter streams through an io.Pipe into the multipart uploader, so at
// most a few parts are in memory whatever the object size. S3 publishes a
// PUT or a completed multipart upload atomically.
func (b *Bucket) NewWriter(ctx context.Context, key string) (driver.Writer, error) {
	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	w := &writer{pw: pw, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		_, err := b.uploader.Upload(ctx, &s3.PutObjectInput{Bucket: aws.String(b.bucket), Key: b.s3Key(key), Body: pr})
		if err != nil {
			pr.CloseWithError(err) // unblocks a Write waiting on the uploader
			var mf manager.MultiUploadFailure
			if errors.As(err, &mf) && mf.UploadID() != "" {
				b.abortUpload(ctx, key, mf.UploadID())
			}
		}
		w.err = err
	}()
	return w, nil
}

func (b *Bucket) abortUpload(ctx context.Context, key, uploadID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	_, err := b.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
		Bucket: aws.String(b.bucket), Key: b.s3Key(key), UploadId: aws.String(uploadID),
	})
	if err != nil {
		// Not fatal: the parts are invisible and a lifecycle rule can expire them.
		slog.Warn("s3blob: abort multipart upload", "bucket", b.bucket, "key", b.prefix+key, "upload_id", uploadID, "err", err)
	}
}

var errAborted = errors.New("write aborted")

type writer struct {
	pw     *io.PipeWriter
	cancel context.CancelFunc
	done   chan struct{}
	err    error // upload result; read only after done is closed
}

func (w *writer) Write(p []byte) (int, error) { return w.pw.Write(p) }

func (w *writer) Commit() error {
	w.pw.Close()
	<-w.done
	w.cancel()
	if w.err != nil {
		return fmt.Errorf("upload: %w", w.err)
	}
	return nil
}

func (w *writer) Abort() error {
	w.cancel()
	w.pw.CloseWithError(errAborted)
	<-w.done
	return nil
}

// NewRangeReader issues one GET with a Range header when a range is asked for.
func (b *Bucket) NewRangeReader(ctx context.Context, key string, offset, length int64) (driver.Reader, error) {
	if length == 0 {
		return b.emptyReader(ctx, key) // HTTP ranges cannot express zero bytes
	}
	in := &s3.GetObjectInput{Bucket: aws.String(b.bucket), Key: b.s3Key(key)}
	switch {
	case length > 0:
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", offset, offset+length-1))
	case offset > 0:
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", offset))
	}
	out, err := b.client.GetObject(ctx, in)
	if err != nil {
		if in.Range != nil && isInvalidRange(err) {
			return b.emptyReader(ctx, key) // offset at or past the end
		}
		return nil, mapErr(err)
	}
	size := aws.ToInt64(out.ContentLength)
	if in.Range != nil && out.ContentRange != nil {
		// "bytes first-last/total"
		_, total, ok := strings.Cut(aws.ToString(out.ContentRange), "/")
		if size, err = strconv.ParseInt(total, 10, 64); !ok || err != nil {
			out.Body.Close()
			return nil, fmt.Errorf("unexpected Content-Range %q", aws.ToString(out.ContentRange))
		}
	}
	attrs := driver.Attrs{Size: size, ModTime: aws.ToTime(out.LastModified), ETag: cleanETag(out.ETag)}
	return &reader{ReadCloser: out.Body, attrs: attrs}, nil
}

func (b *Bucket) emptyReader(ctx context.Context, key string) (driver.Reader, error) {
	attrs, err := b.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &reader{ReadCloser: io.NopCloser(bytes.NewReader(nil)), attrs: attrs}, nil
}

type reader struct {
	io.ReadCloser
	attrs driver.Attrs
}

func (r *reader) Attrs() driver.Attrs { return r.attrs }

func cleanETag(etag *string) string { return strings.Trim(aws.ToString(etag), `"`) }

// Attributes issues a HEAD request.
func (b *Bucket) Attributes(ctx context.Context, key string) (driver.Attrs, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: b.s3Key(key)})
	if err != nil {
		return driver.Attrs{}, mapErr(err)
	}
	return driver.Attrs{
		Size:    aws.ToInt64(out.ContentLength),
		ModTime: aws.ToTime(out.LastModified),
		ETag:    cleanETag(out.ETag),
	}, nil
}

// List pages through ListObjectsV2 (1,000 keys per page). Stored keys that
// are not valid blob keys, such as "dir/" markers made by consoles, are skipped
// because no blob call could address them.
func (b *Bucket) List(ctx context.Context, prefix string) ([]driver.ObjectInfo, error) {
	var out []driver.ObjectInfo
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{
		Bucket: aws.String(b.bucket),
		Prefix: aws.String(b.prefix + prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			key, ok := strings.CutPrefix(aws.ToString(o.Key), b.prefix)
			if !ok || driver.ValidateKey(key) != nil {
				slog.Debug("s3blob: skipping unaddressable key", "bucket", b.bucket, "key", aws.ToString(o.Key))
				continue
			}
			out = append(out, driver.ObjectInfo{Key: key, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// ListDirs pages through ListObjectsV2 with Delimiter "/" (1,000 entries per
// page, common prefixes included), so only the prefixes come back, never the
// objects below them. Prefixes no key could address (such as "a//") are
// skipped.
func (b *Bucket) ListDirs(ctx context.Context, prefix string) ([]string, error) {
	var out []string
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{
		Bucket:    aws.String(b.bucket),
		Prefix:    aws.String(b.prefix + prefix),
		Delimiter: aws.String("/"),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, cp := range page.CommonPrefixes {
			dir, ok := strings.CutPrefix(aws.ToString(cp.Prefix), b.prefix)
			if !ok || !strings.HasSuffix(dir, "/") || driver.ValidateKey(strings.TrimSuffix(dir, "/")) != nil {
				slog.Debug("s3blob: skipping unaddressable prefix", "bucket", b.bucket, "prefix", aws.ToString(cp.Prefix))
				continue
			}
			out = append(out, dir)
		}
	}
	return out, nil
}

// Delete checks existence first because S3's DeleteObject succeeds on a
// missing key; the check and the delete are not atomic.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	if _, err := b.Attributes(ctx, key); err != nil {
		return err
	}
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: b.s3Key(key)})
	return mapErr(err)
}
