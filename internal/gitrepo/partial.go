package gitrepo

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// setBlobFilter makes the clone at dir a partial clone of u that fetches
// no blob over maxBytes: u becomes a promisor remote with the filter
// blob:limit=maxBytes, which every later `git fetch u` applies (git
// records a filter given on the command line the same way). The blobs
// left out are read as missing (see objectView), never fetched.
func setBlobFilter(ctx context.Context, dir, u string, maxBytes int64) error {
	if gitBinary() == "" {
		return fmt.Errorf("clone %s: a blob size limit needs the git CLI, which is not installed: %w", redact(u), ErrPermanent)
	}
	for _, kv := range [][2]string{
		{"core.repositoryformatversion", "1"},
		{"remote." + u + ".promisor", "true"},
		{"remote." + u + ".partialclonefilter", BlobFilter(maxBytes)},
	} {
		cmd := exec.CommandContext(ctx, gitBinary(), "--git-dir", dir, "config", kv[0], kv[1])
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("clone %s: set %s: %v: %s", dir, strings.SplitN(kv[0], ".", 2)[0]+" filter", err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// BlobFilter is git's filter spec that leaves out blobs over maxBytes.
func BlobFilter(maxBytes int64) string { return "blob:limit=" + strconv.FormatInt(maxBytes, 10) }
