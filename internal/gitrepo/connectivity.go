package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/revlist"
)

// connectivityFile, in a bare clone, records the ref tips whose objects
// were last found all present, and the objects the source itself lacks.
const connectivityFile = "locus-connectivity"

// connectivity is connectivityFile's content.
type connectivity struct {
	// Tips are the clone's ref tips, sorted, when it was last checked: while
	// they stay the same, a sync checks nothing again.
	Tips []string `json:"tips"`
	// Missing are objects the source lacked when the clone was made (a
	// mirror without its largest blobs): not damage, and not re-fetched.
	Missing []string `json:"missing,omitempty"`
}

// cloneDamage says what the clone at dir lacks of the objects its refs
// reach ("" when nothing): a fetch that failed half-way (go-git writing
// after git ran out of space), or files removed by hand. Blobs that a
// partial clone's filter left out are not damage, nor are objects the
// source lacked when the clone was made. The check walks every object
// (`git rev-list --objects --all`: 1.8 s for the 236,785 objects of a
// 94 MiB clone of grpc-go; go-git's revlist without the git CLI: 8.3 s),
// so it runs only when the refs differ from those last checked.
func cloneDamage(ctx context.Context, dir string) (string, error) {
	// go-git's fetch (the fallback) may have left peeled lines that git
	// refuses to read.
	if err := repairPackedRefs(dir); err != nil {
		return "", err
	}
	tips, err := refTips(ctx, dir)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return Message(err), nil // refs git cannot read
	}
	if err != nil {
		return "", err
	}
	var prev connectivity
	if data, err := os.ReadFile(filepath.Join(dir, connectivityFile)); err == nil {
		if json.Unmarshal(data, &prev) == nil && slices.Equal(prev.Tips, tips) {
			return "", nil
		}
	}
	damage, missing, err := missingObjects(ctx, dir)
	if err != nil {
		return "", err
	}
	if damage != "" {
		return damage, nil
	}
	if extra := notIn(missing, prev.Missing); len(extra) > 0 {
		return fmt.Sprintf("%d objects missing, among them %s", len(extra), extra[0]), nil
	}
	return "", writeConnectivity(dir, connectivity{Tips: tips, Missing: prev.Missing})
}

// AfterMissingObject is err, from reading the clone at dir, unchanged
// unless it says an object is missing: then the clone lost it after its
// last check (the refs have not changed since, so syncs skip the check),
// and the next Sync is made to check it again and clone it afresh instead
// of every index failing the same way; the error says so.
func AfterMissingObject(dir string, err error) error {
	if !isNotFound(err) {
		return err
	}
	if rmErr := os.Remove(filepath.Join(dir, connectivityFile)); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
		return err
	}
	return fmt.Errorf("%w (the clone %s lacks it: the next index checks the clone and clones it afresh)", err, dir)
}

// recordConnectivity notes in a clone just made what its refs are and
// which objects its source lacks, so that later checks tell those from
// damage.
func recordConnectivity(ctx context.Context, dir string) error {
	tips, err := refTips(ctx, dir)
	if err != nil {
		return err
	}
	damage, missing, err := missingObjects(ctx, dir)
	if err != nil {
		return err
	}
	if damage != "" {
		return fmt.Errorf("clone %s: %s", dir, damage)
	}
	return writeConnectivity(dir, connectivity{Tips: tips, Missing: missing})
}

// missingObjects walks every object the clone's refs reach. damage is set
// when the walk cannot finish (a ref or a commit that is not there);
// missing lists the objects absent otherwise, except a partial clone's,
// which are fetched on demand and so are never damage.
func missingObjects(ctx context.Context, dir string) (damage string, missing []string, err error) {
	if gitBinary() == "" {
		return goGitDamage(dir)
	}
	// --missing=allow-promisor: a partial clone's filtered blobs are
	// allowed and not fetched; in a full clone any missing object fails.
	out, err := gitOutput(ctx, dir, "rev-list", "--objects", "--all", "--quiet", "--missing=allow-promisor")
	if err == nil {
		return "", nil, nil
	}
	if ctx.Err() != nil {
		return "", nil, ctx.Err()
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return "", nil, fmt.Errorf("clone %s: check objects: %w", dir, err)
	}
	if partialClone(ctx, dir) {
		return firstLine(out), nil, nil
	}
	// A full clone: list what is missing, to tell objects its source
	// lacked from damage.
	cmd := exec.CommandContext(ctx, gitBinary(), "--git-dir", dir, "rev-list", "--objects", "--all", "--missing=print")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	var stderr tailBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("clone %s: check objects: %w", dir, err)
	}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if id, ok := bytes.CutPrefix(sc.Bytes(), []byte("?")); ok {
			missing = append(missing, string(id))
		}
	}
	io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		return firstLine(withoutProgress(stderr.String()) + "\n" + out), nil, nil
	}
	slices.Sort(missing)
	return "", slices.Compact(missing), nil
}

// partialClone reports whether the clone at dir has a promisor remote
// (origin after `git clone --filter`, or the remote named by its URL that
// a blob size limit configures).
func partialClone(ctx context.Context, dir string) bool {
	if ext, _ := gitOutput(ctx, dir, "config", "--get", "extensions.partialclone"); strings.TrimSpace(ext) != "" {
		return true
	}
	out, _ := gitOutput(ctx, dir, "config", "--bool", "--get-regexp", `^remote\..*\.promisor$`)
	for _, l := range strings.Split(out, "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), " true") {
			return true
		}
	}
	return false
}

// refTips are the objects the clone's refs point at, sorted, once each.
func refTips(ctx context.Context, dir string) ([]string, error) {
	if gitBinary() == "" {
		return goGitTips(dir)
	}
	out, err := gitOutput(ctx, dir, "for-each-ref", "--format=%(objectname)")
	if err != nil {
		return nil, fmt.Errorf("clone %s: list refs: %w: %s", dir, err, strings.TrimSpace(out))
	}
	tips := strings.Fields(out)
	slices.Sort(tips)
	return slices.Compact(tips), nil
}

func writeConnectivity(dir string, c connectivity) error {
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	name := filepath.Join(dir, connectivityFile)
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		os.Remove(tmp)
		if IsDiskFull(err) {
			return diskFull(dir, err)
		}
		return fmt.Errorf("clone %s: %w", dir, err)
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("clone %s: %w", dir, err)
	}
	return nil
}

// gitOutput runs git on the clone at dir, returning what it printed
// (stderr included).
func gitOutput(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, gitBinary(), append([]string{"--git-dir", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// notIn lists the elements of sorted a that sorted b lacks.
func notIn(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found {
			out = append(out, s)
		}
	}
	return out
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return "git rev-list failed"
}

// goGitTips is refTips read with go-git.
func goGitTips(dir string) ([]string, error) {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return nil, fmt.Errorf("open clone %s: %w", dir, err)
	}
	refs, err := r.References()
	if err != nil {
		return nil, fmt.Errorf("clone %s: list refs: %w", dir, err)
	}
	var tips []string
	err = refs.ForEach(func(ref *plumbing.Reference) error {
		if ref.Type() == plumbing.HashReference {
			tips = append(tips, ref.Hash().String())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("clone %s: list refs: %w", dir, err)
	}
	slices.Sort(tips)
	return slices.Compact(tips), nil
}

// goGitDamage is missingObjects without the git CLI: go-git's revlist
// walks commits and trees (failing on one that is missing), and every blob
// it names must be stored. A source's own missing objects are damage
// here: go-git cannot clone such a source in the first place.
func goGitDamage(dir string) (string, []string, error) {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return "", nil, fmt.Errorf("open clone %s: %w", dir, err)
	}
	tips, err := goGitTips(dir)
	if err != nil {
		return "", nil, err
	}
	hashes := make([]plumbing.Hash, len(tips))
	for i, t := range tips {
		hashes[i] = plumbing.NewHash(t)
	}
	all, err := revlist.Objects(r.Storer, hashes, nil)
	if err != nil {
		return err.Error(), nil, nil
	}
	for _, h := range all {
		if err := r.Storer.HasEncodedObject(h); err != nil {
			return fmt.Sprintf("object %s: %v", h, err), nil, nil
		}
	}
	return "", nil, nil
}
