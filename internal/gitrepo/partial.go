package gitrepo

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5"
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

// partialFilter is the filter the clone repo applies to fetches from u
// (set by setBlobFilter); empty when it is not a partial clone of u.
func partialFilter(repo *git.Repository, u string) string {
	cfg, err := repo.Config()
	if err != nil || cfg.Raw == nil {
		return ""
	}
	return cfg.Raw.Section("remote").Subsection(u).Option("partialclonefilter")
}

// BlobFilter is git's filter spec that leaves out blobs over maxBytes.
func BlobFilter(maxBytes int64) string { return "blob:limit=" + strconv.FormatInt(maxBytes, 10) }

// partialLocalClone clones the local repository at u without the blobs over
// maxBytes. Its upload-pack is told to allow the filter, which a local
// repository's configuration seldom does. It fails, leaving nothing at
// tmp, when the source cannot serve the filtered pack: a source that lacks
// objects itself (a partial clone, an incomplete mirror) cannot say how
// large its missing blobs are. The caller then clones with hard links,
// which copies what the source has.
func partialLocalClone(ctx context.Context, tmp, u string, maxBytes int64) (*git.Repository, error) {
	cmd := exec.CommandContext(ctx, gitBinary(), "clone", "--bare", "--no-local", "--quiet", "--filter="+BlobFilter(maxBytes),
		"--upload-pack", "git -c uploadpack.allowFilter=true upload-pack", "--", u, tmp)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_NO_LAZY_FETCH=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		slog.Debug("partial clone of a local repository failed; cloning it whole", "url", u, "err", err, "output", strings.TrimSpace(string(out)))
		return nil, err
	}
	return git.PlainOpen(tmp)
}
