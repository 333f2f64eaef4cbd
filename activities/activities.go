// Package activities adapts locus's engines to Temporal: decode input, call the engine,
// heartbeat, and map errors to retryable or non-retryable.
package activities

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/gitrepo"
)

// Error types of non-retryable application errors.
const (
	// ErrTypeBadInput: the input can never succeed (bad name, not a repository,
	// no such ref, corrupt object).
	ErrTypeBadInput = "BadInput"
)

// permanent wraps err as non-retryable when retrying cannot help.
func permanent(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, gitrepo.ErrPermanent) || errors.Is(err, gitrepo.ErrCorruptObject) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, err)
	}
	return err
}
