package activities

import (
	"context"
	"errors"
	"slices"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"

	"github.com/locus-dev/locus/internal/gitrepo"
)

// ErrTypeDiskFull marks a failure for want of disk space (ENOSPC, EDQUOT,
// or git or SQLite saying so): non-retryable, since every attempt would
// fail the same way until someone frees space, and a run that retried would
// hold the command for as long as its retry policy allows.
const ErrTypeDiskFull = "DiskFull"

// remoteErrTypes are errors that report what a remote server said; a
// server's full disk is its own, and retrying it may help.
var remoteErrTypes = []string{ErrTypeLLMRetryable, ErrTypeEmbedRetryable, ErrTypeInvalidOutput}

// diskFull is err, when it comes from a full disk, as a non-retryable
// error of type ErrTypeDiskFull with err's message (which names the path
// or the clone); other errors are returned as they are.
func diskFull(err error) error {
	if err == nil || !gitrepo.IsDiskFull(err) {
		return err
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && (app.Type() == ErrTypeDiskFull || slices.Contains(remoteErrTypes, app.Type())) {
		return err
	}
	return temporal.NewNonRetryableApplicationError(gitrepo.CleanMessage(err.Error()), ErrTypeDiskFull, nil)
}

// DiskFullInterceptor makes every activity's disk-full failure an
// ErrTypeDiskFull error (see diskFull), whichever engine or store write
// ran out of space: the workflow that ran it ends at once with an error
// saying so.
type DiskFullInterceptor struct {
	interceptor.WorkerInterceptorBase
}

// InterceptActivity wraps the activity inbound chain.
func (DiskFullInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &diskFullActivity{}
	i.Next = next
	return i
}

type diskFullActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *diskFullActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := a.Next.ExecuteActivity(ctx, in)
	return res, diskFull(err)
}
