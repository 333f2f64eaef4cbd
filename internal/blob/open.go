package blob

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/blob/fileblob"
	"github.com/locus-dev/locus/internal/blob/s3blob"
)

// Open opens the bucket named by rawURL; the accepted forms are in the package doc.
func Open(ctx context.Context, rawURL string) (*Bucket, error) {
	if !strings.Contains(rawURL, "://") {
		if rawURL == "" {
			return nil, fmt.Errorf("blob open: empty URL")
		}
		return OpenFile(rawURL, fileblob.Options{})
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("blob open %q: %w", rawURL, err)
	}
	switch u.Scheme {
	case "file":
		dir, err := fileDir(u)
		if err != nil {
			return nil, fmt.Errorf("blob open %q: %w", rawURL, err)
		}
		return OpenFile(dir, fileblob.Options{})
	case "s3":
		opts, err := s3Options(u)
		if err != nil {
			return nil, fmt.Errorf("blob open %q: %w", rawURL, err)
		}
		return OpenS3(ctx, opts)
	default:
		return nil, fmt.Errorf("blob open %q: unsupported scheme %q (want file or s3)", rawURL, u.Scheme)
	}
}

// OpenFile opens a directory bucket; see fileblob.Open.
func OpenFile(dir string, opts fileblob.Options) (*Bucket, error) {
	d, err := fileblob.Open(dir, opts)
	if err != nil {
		return nil, fmt.Errorf("blob open: %w", err)
	}
	b := NewBucket(d)
	if b.base, err = filepath.Abs(dir); err != nil {
		b.base = dir
	}
	return b, nil
}

// OpenS3 opens an S3 bucket; see s3blob.Open.
func OpenS3(ctx context.Context, opts s3blob.Options) (*Bucket, error) {
	// The driver trims surrounding slashes, so "/runs/" means "runs".
	if err := ValidatePrefix(strings.Trim(opts.Prefix, "/")); err != nil {
		return nil, fmt.Errorf("blob open s3://%s: prefix: %w", opts.Bucket, err)
	}
	d, err := s3blob.Open(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("blob open: %w", err)
	}
	b := NewBucket(d)
	b.base = "s3://" + opts.Bucket
	if p := strings.Trim(opts.Prefix, "/"); p != "" {
		b.base += "/" + p
	}
	return b, nil
}

func fileDir(u *url.URL) (string, error) {
	if u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("file URLs take no query or fragment")
	}
	switch u.Host {
	case "", "localhost":
		if u.Path == "" {
			return "", fmt.Errorf("missing directory")
		}
		return u.Path, nil
	case ".", "..":
		return u.Host + u.Path, nil
	default:
		return "", fmt.Errorf("host %q not supported: use file:///abs/dir or file://./rel/dir", u.Host)
	}
}

func s3Options(u *url.URL) (s3blob.Options, error) {
	opts := s3blob.Options{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}
	if opts.Bucket == "" {
		return opts, fmt.Errorf("missing bucket name (want s3://bucket/prefix)")
	}
	if u.Fragment != "" {
		return opts, fmt.Errorf("s3 URLs take no fragment")
	}
	if err := ValidatePrefix(opts.Prefix); err != nil {
		return opts, fmt.Errorf("prefix: %w", err)
	}
	for name, vals := range u.Query() {
		if len(vals) != 1 {
			return opts, fmt.Errorf("query parameter %q given %d times", name, len(vals))
		}
		v := vals[0]
		switch name {
		case "endpoint":
			ep, err := url.Parse(v)
			if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
				return opts, fmt.Errorf("endpoint %q: want http(s)://host[:port]", v)
			}
			opts.Endpoint = v
		case "region":
			opts.Region = v
		case "path_style":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return opts, fmt.Errorf("path_style %q: want true or false", v)
			}
			opts.PathStyle = b
		default:
			return opts, fmt.Errorf("unknown query parameter %q (known: endpoint, path_style, region)", name)
		}
	}
	return opts, nil
}
