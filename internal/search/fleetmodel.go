package search

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/rank"
	"github.com/locus-dev/locus/schema"
)

// FleetModelPrefix starts a Params.Model that names a fleet's model in the
// store (`locus rank train --fleet NAME` publishes it): "fleet:NAME" is
// the fleet's model, "fleet:NAME/loo" the model trained without the
// queried repository (leave-one-repository-out validation).
const FleetModelPrefix = "fleet:"

// FleetModelKey is the store key of the model ref names (a
// FleetModelPrefix reference) for a query of repo; ok is false when ref
// is not such a reference.
func FleetModelKey(ref string, repo schema.RepoName) (key string, ok bool, err error) {
	name, ok := strings.CutPrefix(ref, FleetModelPrefix)
	if !ok {
		return "", false, nil
	}
	fleet, loo := strings.CutSuffix(name, "/loo")
	if fleet == "" || schema.SafeKeySegment(fleet) != fleet {
		return "", true, fmt.Errorf("ranking model %q: want fleet:NAME or fleet:NAME/loo: %w", ref, ErrBadQuery)
	}
	if loo {
		return schema.RankModelKey(fleet, "loo/"+repo.FileName()+".json"), true, nil
	}
	return schema.RankModelKey(fleet, "model.json"), true, nil
}

// ModelOf is the model that ranks repo's queries: a fleet's stored model
// (see FleetModelPrefix) or a model file or directory (ModelFor,
// LoadModel).
func ModelOf(ctx context.Context, b *blob.Bucket, ref string, repo schema.RepoName) (*rank.Model, error) {
	key, ok, err := FleetModelKey(ref, repo)
	if err != nil {
		return nil, err
	}
	if !ok {
		return LoadModel(ModelFor(ref, repo))
	}
	attrs, err := b.Attributes(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, fmt.Errorf("ranking model %s: no model in the store at %s (train one with locus rank train --fleet): %w", ref, key, ErrBadQuery)
	}
	if err != nil {
		return nil, fmt.Errorf("ranking model %s: %w", ref, err)
	}
	return cachedModel(fmt.Sprintf("store %s %s %d %d", key, attrs.ETag, attrs.Size, attrs.ModTime.UnixNano()), func() (*rank.Model, error) {
		data, err := b.ReadAll(ctx, key)
		if err != nil {
			return nil, fmt.Errorf("ranking model %s: %w", ref, err)
		}
		return rank.ParseModel(key, data)
	})
}
