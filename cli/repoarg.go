package cli

import (
	"context"
	"errors"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/manifest"
	"github.com/locus-dev/locus/schema"
)

// storeIndex is the store as gitrepo.ResolveIndexed reads it. A damaged
// manifest still names a stored repository: it resolves, and the command
// that reads it reports the damage.
type storeIndex struct{ b *blob.Bucket }

func (s storeIndex) Manifest(ctx context.Context, n schema.RepoName) (*schema.Manifest, error) {
	m, err := manifest.Read(ctx, s.b, n)
	if err != nil {
		return &schema.Manifest{Repo: n}, nil
	}
	return m, nil
}

func (s storeIndex) Manifests(ctx context.Context) ([]schema.Manifest, error) {
	ms, bad, err := manifest.ListAll(ctx, s.b)
	if err != nil {
		return nil, err
	}
	for _, e := range bad {
		ms = append(ms, schema.Manifest{Repo: e.Repo})
	}
	return ms, nil
}

// resolveRepo maps a --repo argument onto the stored repository it means.
func resolveRepo(ctx context.Context, b *blob.Bucket, arg string) (schema.RepoName, error) {
	return gitrepo.ResolveIndexed(ctx, arg, storeIndex{b})
}

// resolveRepoOrName is resolveRepo for commands that report a repository
// that is not indexed themselves, with its own row (status, triplets): an
// owner/name that is not indexed comes back as that name; a path or URL
// that matches no stored repository is still an error.
func resolveRepoOrName(ctx context.Context, b *blob.Bucket, arg string) (schema.RepoName, error) {
	n, err := resolveRepo(ctx, b, arg)
	if errors.Is(err, gitrepo.ErrNotIndexed) {
		if pn, perr := schema.ParseRepoName(arg); perr == nil {
			return pn, nil
		}
	}
	return n, err
}
