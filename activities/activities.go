// Package activities adapts locus's engines to Temporal: decode input, call the engine,
// heartbeat, and map errors to retryable or non-retryable.
package activities

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/gitrepo"
	"github.com/locus-dev/locus/internal/vectors"
)

// Error types of non-retryable application errors.
const (
	// ErrTypeBadInput: the input can never succeed (bad name, not a repository,
	// no such ref, corrupt object, invalid parameters).
	ErrTypeBadInput = "BadInput"
)

// permanent wraps err as non-retryable when retrying cannot help. The
// message is the whole story, so the error carries no cause: a cause would
// be serialised as a chain that repeats the message and ends in the bare
// marker ("permanent").
func permanent(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gitrepo.ErrPermanent) || errors.Is(err, gitrepo.ErrCorruptObject) {
		return temporal.NewNonRetryableApplicationError(gitrepo.CleanMessage(err.Error()), ErrTypeBadInput, nil)
	}
	return err
}

// badInput is a non-retryable error for an input that fails validation.
func badInput(err error) error {
	return temporal.NewNonRetryableApplicationError(strings.ReplaceAll(err.Error(), "\n", "; "), ErrTypeBadInput, nil)
}

// vectorStore names the vector index for the manifest: "local" for the
// default exact index in the store, else its driver's package ("milvus").
func vectorStore(ix vectors.Index) string {
	switch ix.(type) {
	case nil, *vectors.Local:
		return "local"
	}
	if s, ok := ix.(fmt.Stringer); ok {
		return s.String()
	}
	name := strings.TrimPrefix(fmt.Sprintf("%T", ix), "*")
	if pkg, _, ok := strings.Cut(name, "."); ok {
		return pkg
	}
	return name
}
