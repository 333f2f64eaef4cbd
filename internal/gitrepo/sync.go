// Package gitrepo clones and fetches repositories and reads their history:
// commit walks, tree and line diffs, rename tracking.
package gitrepo

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	format "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/client"
	"github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"

	"github.com/locus-dev/locus/schema"
)

// ErrPermanent marks sync failures that retrying cannot fix (no such repository,
// not a repository, authentication refused, unknown ref).
var ErrPermanent = errors.New("permanent")

// Message is err's text for people: without the markers ErrPermanent adds
// ("…: permanent", "… (permanent)"), which classify the error and say
// nothing to a reader, and without control characters (a remote's sideband
// messages end in NUL; git's own lines in newlines, which become "; ").
func Message(err error) string {
	return CleanMessage(err.Error())
}

// CleanMessage is Message for a message already turned into text.
func CleanMessage(msg string) string {
	m := ErrPermanent.Error()
	msg = strings.ReplaceAll(msg, " ("+m+")", "")
	msg = strings.ReplaceAll(msg, ": "+m+": ", ": ")
	msg = strings.TrimSuffix(msg, ": "+m)
	var b strings.Builder
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, line))
		if line == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(line)
	}
	return b.String()
}

// SyncOptions describe one clone-or-fetch.
type SyncOptions struct {
	// Dir is where the bare mirror clone lives; created on first sync.
	Dir string
	// URL: https://, http://, ssh://, git@host:path, file://, or a local path
	// to a working copy or a bare repository.
	URL string
	// Ref to resolve after syncing: branch, tag, full ref name or commit id;
	// default the remote's HEAD.
	Ref string
	// Progress receives the server's progress messages; may be nil.
	Progress io.Writer
	// Auth overrides credentials; default: $LOCUS_GIT_TOKEN as a bearer-style
	// basic auth for http(s), ssh-agent for ssh.
	Auth transport.AuthMethod
	// MaxBlobSize, when positive, makes the clone a partial clone that
	// fetches no blob larger than this many bytes (git's
	// --filter=blob:limit=N); later fetches keep the filter. Needs the git
	// CLI. Blobs left out read as missing (IsMissingObject).
	MaxBlobSize int64
}

// SyncResult is what a sync found.
type SyncResult struct {
	Head    Hash // zero when Empty
	Empty   bool // the remote has no commits
	Shallow bool // the clone has shallow boundaries
}

var installFileTransport sync.Once

// Sync clones opts.URL into opts.Dir as a bare mirror, or fetches into an
// existing clone, and resolves opts.Ref. A first clone is made in a temporary
// directory and renamed into place, so an interrupted clone leaves nothing half-made.
func Sync(ctx context.Context, opts SyncOptions) (SyncResult, error) {
	installFileTransport.Do(func() {
		// go-git's file transport runs git-upload-pack; without git installed,
		// serve local repositories in process instead.
		if gitBinary() == "" {
			client.InstallProtocol("file", server.NewClient(server.DefaultLoader))
		}
	})
	u, err := normaliseURL(opts.URL)
	if err != nil {
		return SyncResult{}, err
	}
	auth := opts.Auth
	if auth == nil && (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
		if tok := os.Getenv("LOCUS_GIT_TOKEN"); tok != "" {
			auth = &http.BasicAuth{Username: "x-access-token", Password: tok}
		}
	}
	if err := dropCloneOfOtherURL(opts.Dir, u); err != nil {
		return SyncResult{}, err
	}
	var repo *git.Repository
	if _, err := os.Stat(opts.Dir); errors.Is(err, os.ErrNotExist) {
		if repo, err = cloneChecked(ctx, opts.Dir, u, opts.Ref, auth, opts.Progress, opts.MaxBlobSize); err != nil {
			return SyncResult{}, err
		}
	} else {
		repo, err = git.PlainOpen(opts.Dir)
		if err != nil {
			return SyncResult{}, fmt.Errorf("open clone %s: %w", opts.Dir, err)
		}
		if opts.MaxBlobSize > 0 {
			if err := setBlobFilter(ctx, opts.Dir, u, opts.MaxBlobSize); err != nil {
				return SyncResult{}, err
			}
		}
		err = fetchInto(ctx, repo, opts.Dir, u, opts.Ref, auth, opts.Progress)
		if err == nil || !errors.Is(err, errRemoteEmpty) && ctx.Err() == nil {
			if repo, err = repairClone(ctx, repo, opts.Dir, u, opts.Ref, auth, opts.Progress, opts.MaxBlobSize, err); err != nil {
				return SyncResult{}, err
			}
		}
		if errors.Is(err, errRemoteEmpty) && opts.Ref == "" {
			// The clone still has the refs of its last fetch: report what
			// the remote has now, nothing.
			return SyncResult{Empty: true}, nil
		}
		if err != nil {
			return SyncResult{}, err
		}
	}
	return resolve(repo, opts.Dir, opts.Ref)
}

// cloneChecked is clone, recording which objects the new clone lacks (those
// its source lacks) so that later checks do not take them for damage.
func cloneChecked(ctx context.Context, dir, u, ref string, auth transport.AuthMethod, progress io.Writer, maxBlob int64) (*git.Repository, error) {
	repo, err := clone(ctx, dir, u, ref, auth, progress, maxBlob)
	if err != nil {
		return nil, err
	}
	return repo, recordConnectivity(ctx, dir)
}

// repairClone checks, after a fetch into the clone at dir that ended with
// fetchErr (nil when it succeeded), that every object its refs reach is
// there (cloneDamage). A damaged clone is removed and, unless the disk is
// full, cloned afresh: a clone damaged before (a fetch that fell back to
// go-git on a full disk, objects removed by hand) is repaired by the next
// sync instead of failing every scrape with "object not found". It
// returns the clone to read and fetchErr, or the error that replaces it.
func repairClone(ctx context.Context, repo *git.Repository, dir, u, ref string, auth transport.AuthMethod, progress io.Writer, maxBlob int64, fetchErr error) (*git.Repository, error) {
	damage, err := cloneDamage(ctx, dir)
	if err != nil {
		if fetchErr != nil {
			return nil, fetchErr
		}
		return nil, err
	}
	if damage == "" {
		return repo, fetchErr
	}
	if IsDiskFull(fetchErr) {
		// Cloning again needs the space that is missing; the damaged
		// clone goes, so that the next sync clones afresh.
		slog.Warn("the clone lacks objects and the disk is full; removing it", "dir", dir, "damage", damage)
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("%w; remove damaged clone %s: %v", fetchErr, dir, err)
		}
		return nil, fetchErr
	}
	slog.Warn("the clone lacks objects its refs reach; cloning afresh", "dir", dir, "url", redact(u), "damage", damage, "fetch_error", errText(fetchErr))
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("remove damaged clone %s (%s): %w", dir, damage, err)
	}
	return cloneChecked(ctx, dir, u, ref, auth, progress, maxBlob)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return Message(err)
}

// normaliseURL turns local paths into absolute file:// URLs and checks that a
// local path is a git repository, so the error names the input.
func normaliseURL(raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("repository URL is empty: %w", ErrPermanent)
	}
	if strings.Contains(raw, "://") {
		pu, err := url.Parse(raw)
		if err != nil {
			return "", fmt.Errorf("repository URL %q: %v: %w", raw, err, ErrPermanent)
		}
		if pu.Scheme != "file" {
			return raw, nil
		}
		raw = pu.Path
	} else if isSCPLike(raw) {
		return raw, nil
	}
	abs, err := filepath.Abs(raw)
	if err != nil {
		return "", fmt.Errorf("repository path %q: %w", raw, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("repository path %q: %v: %w", raw, err, ErrPermanent)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("repository path %q: not a directory: %w", raw, ErrPermanent)
	}
	src, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return "", fmt.Errorf("repository path %q: not a git repository (%v): %w", raw, err, ErrPermanent)
	}
	// A shallow source would give a clone whose history starts at an
	// arbitrary commit: wrong root, every file "added" there, and an identity
	// that changes once the source is unshallowed. Refuse it up front.
	if sh, err := src.Storer.Shallow(); err == nil && len(sh) > 0 {
		return "", fmt.Errorf("repository path %q: %w", raw, shallowError(abs, sh[0]))
	}
	return "file://" + abs, nil
}

// isSCPLike reports whether s is ssh shorthand such as git@host:owner/repo.git.
func isSCPLike(s string) bool {
	at := strings.Index(s, "@")
	colon := strings.Index(s, ":")
	slash := strings.Index(s, "/")
	return colon > 0 && (slash < 0 || colon < slash) && (at < 0 || at < colon)
}

// remoteHead records what the remote's HEAD pointed at when last fetched, so
// an empty ref follows the remote's current default branch or detached HEAD.
const remoteHead = plumbing.ReferenceName("refs/locus/remote-head")

// refSpecs says what a sync fetches: branches, tags and the remote HEAD, plus
// ref itself when it is a full ref name elsewhere (refs/pull/1/head). Not
// refs/*: hosting services keep thousands of pull-request refs there, whose
// objects nobody indexes and which mirrors often lack.
func refSpecs(ref string) []config.RefSpec {
	specs := []config.RefSpec{"+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*", config.RefSpec("+HEAD:" + remoteHead)}
	if strings.HasPrefix(ref, "refs/") && !strings.HasPrefix(ref, "refs/heads/") && !strings.HasPrefix(ref, "refs/tags/") {
		specs = append(specs, config.RefSpec("+"+ref+":"+ref))
	}
	return specs
}

// clone is init + fetch rather than go-git's clone, which cannot mirror a
// remote whose HEAD is detached. maxBlob > 0 makes it a partial clone
// (setBlobFilter), fetched even from a local source.
func clone(ctx context.Context, dir, u, ref string, auth transport.AuthMethod, progress io.Writer, maxBlob int64) (*git.Repository, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, fmt.Errorf("clone %s: %w", u, err)
	}
	// Leftovers of clones killed before they could clean up (kill -9).
	if stale, _ := filepath.Glob(dir + ".tmp-*"); len(stale) > 0 {
		for _, d := range stale {
			os.RemoveAll(d)
		}
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := dir + ".tmp-" + hex.EncodeToString(rnd[:])
	defer os.RemoveAll(tmp)
	r, err := localClone(ctx, tmp, u, maxBlob)
	if err != nil {
		// Init + fetch, which any source allows.
		os.RemoveAll(tmp)
		if r, err = git.PlainInit(tmp, true); err != nil {
			return nil, fmt.Errorf("clone %s: init: %w", u, err)
		}
	}
	if err := setOrigin(r, u); err != nil {
		return nil, fmt.Errorf("clone %s: %w", u, err)
	}
	if maxBlob > 0 {
		if err := setBlobFilter(ctx, tmp, u, maxBlob); err != nil {
			return nil, err
		}
	}
	if err := fetchInto(ctx, r, tmp, u, ref, auth, progress); err != nil && !errors.Is(err, errRemoteEmpty) {
		return nil, err
	}
	if sh, err := r.Storer.Shallow(); err == nil && len(sh) > 0 {
		return nil, fmt.Errorf("clone %s: %w", u, shallowError(u, sh[0]))
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("clone %s: move into place: %w", u, err)
	}
	r, err = git.PlainOpen(dir)
	if err != nil {
		return nil, fmt.Errorf("open clone %s: %w", dir, err)
	}
	return r, nil
}

// localClone makes the first clone of a local repository with `git clone
// --local`, which hard-links (or copies) its object files instead of
// packing every object through the transport: much faster for a large
// repository on the same disk, and it works on a source that lacks objects
// nobody reads (a mirror without its largest blobs, which the transport
// refuses as corrupt). The fetch after it adds the refs locus keeps. It
// fails, and the caller fetches instead, when u is not local or git is not
// installed. maxBlob > 0 first tries a partial clone (partialLocalClone).
func localClone(ctx context.Context, tmp, u string, maxBlob int64) (*git.Repository, error) {
	path, ok := strings.CutPrefix(u, "file://")
	if !ok || gitBinary() == "" {
		return nil, errors.New("not a local repository, or no git CLI")
	}
	if maxBlob > 0 {
		if r, err := partialLocalClone(ctx, tmp, u, maxBlob); err == nil {
			return r, nil
		}
	}
	cmd := exec.CommandContext(ctx, gitBinary(), "clone", "--bare", "--local", "--quiet", "--", path, tmp)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		slog.Debug("local clone failed; fetching instead", "url", u, "err", err, "output", strings.TrimSpace(string(out)))
		return nil, err
	}
	return git.PlainOpen(tmp)
}

// setOrigin points the clone's origin remote at u with locus's refspecs.
func setOrigin(r *git.Repository, u string) error {
	cfg, err := r.Config()
	if err != nil {
		return err
	}
	cfg.Remotes["origin"] = &config.RemoteConfig{Name: "origin", URLs: []string{u}, Fetch: refSpecs("")}
	if cfg.Core.RepositoryFormatVersion == format.Version_1 && cfg.Extensions.ObjectFormat == "" && len(cfg.Raw.Section("extensions").Options) == 0 {
		// A partial clone by git is of version 1 with no extension, where
		// go-git would write an empty extensions.objectformat, which git
		// refuses to read; version 0 means the same and git reads it.
		cfg.Core.RepositoryFormatVersion = format.Version_0
	}
	return r.SetConfig(cfg)
}

// errRemoteEmpty: the remote has no refs (an empty repository).
var errRemoteEmpty = errors.New("the remote repository is empty")

// dropCloneOfOtherURL removes the clone at dir when it was made from another
// URL than u: the name now points elsewhere (the repository moved, or another
// repository is indexed under the name and will be refused), and fetching into
// it would mix two histories. The clone is a cache; the next sync remakes it.
func dropCloneOfOtherURL(dir, u string) error {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return nil // absent, or not a clone: Sync reports the latter
	}
	cfg, err := r.Config()
	if err != nil {
		return nil
	}
	rc, ok := cfg.Remotes["origin"]
	if !ok || len(rc.URLs) == 0 || rc.URLs[0] == u {
		return nil
	}
	slog.Info("the clone was made from another URL; cloning afresh", "dir", dir, "was", redact(rc.URLs[0]), "now", redact(u))
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove clone %s of %s: %w", dir, redact(rc.URLs[0]), err)
	}
	return nil
}

// goGitFetch and cliFetchFn are go-git's fetch and the git CLI's; tests
// replace them to make one fail.
var (
	goGitFetch = fetch
	cliFetchFn = cliFetch
)

// fetchInto fetches every branch and tag and the remote HEAD into the clone
// at dir. Where the git CLI is installed it fetches first:
//   - it asks the remote for the refs it fetches only (protocol v2), where
//     go-git reads every ref the remote advertises, thousands of
//     pull-request refs on hosting services (7,351 refs for grpc-go: a sync
//     with nothing new took 0.21 s with go-git, 0.02 s with git);
//   - go-git's prune rewrites packed-refs leaving the peeled line ("^…") of
//     a tag it removes, which git then refuses to read ("unexpected line");
//   - go-git cannot fetch a remote whose HEAD is detached (a CI checkout)
//     and rejects some packs that git accepts.
//
// When the CLI fails, go-git fetches, and its error (typed: a repository
// that does not exist, refused credentials, an empty remote, a refused
// connection) is the one returned, naming the CLI's. Not when the disk is
// full: that error (ErrDiskFull, naming dir) is returned as it is. Without
// the CLI, go-git fetches alone.
func fetchInto(ctx context.Context, repo *git.Repository, dir, u, ref string, auth transport.AuthMethod, progress io.Writer) error {
	if gitBinary() == "" {
		err := goGitFetch(ctx, repo, u, ref, auth, progress)
		if err != nil && !errors.Is(err, errRemoteEmpty) && ctx.Err() == nil && cliMayHelp(err) {
			if strings.Contains(err.Error(), plumbing.ErrReferenceNotFound.Error()) {
				return fmt.Errorf("%w; the remote's HEAD is detached, which go-git cannot fetch; install git or give a branch", err)
			}
			return fmt.Errorf("%w (installing git lets locus fetch with the git CLI)", err)
		}
		return err
	}
	if err := repairPackedRefs(dir); err != nil {
		return err
	}
	cerr := cliFetchFn(ctx, dir, u, ref, auth, progress)
	if cerr == nil || ctx.Err() != nil {
		return cerr
	}
	if IsDiskFull(cerr) {
		// go-git would write into the same full disk, and one that fails
		// half-way leaves refs to objects it never wrote.
		return diskFull(dir, cerr)
	}
	if f := partialFilter(repo, u); f != "" {
		// go-git knows no filters: it would fetch every blob the clone
		// was made to leave out.
		return fmt.Errorf("%w (a partial clone, %s, is fetched by git only)", cerr, f)
	}
	err := goGitFetch(ctx, repo, u, ref, auth, progress)
	switch {
	case err == nil:
		slog.Warn("git fetch failed; go-git fetched instead", "url", redact(u), "dir", dir, "git_error", Message(cerr))
	case !errors.Is(err, errRemoteEmpty): // git fails on an empty remote, go-git says what it is
		return fmt.Errorf("%w (go-git fetched after git fetch failed: %s)", err, Message(cerr))
	}
	return err
}

// repairPackedRefs drops from the clone's packed-refs the peeled lines
// ("^<id>") that follow no ref, which go-git's prune leaves behind when it
// removes a tag (clones made by earlier versions have them): git refuses
// to read the file otherwise. The file is replaced atomically.
func repairPackedRefs(dir string) error {
	name := filepath.Join(dir, "packed-refs")
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("clone %s: read packed-refs: %w", dir, err)
	}
	var out []byte
	peelable, dropped := false, 0
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		switch {
		case len(line) == 0:
			continue
		case line[0] == '^':
			if !peelable {
				dropped++
				continue
			}
			peelable = false
		default:
			peelable = line[0] != '#'
		}
		out = append(out, line...)
	}
	if dropped == 0 {
		return nil
	}
	tmp := name + ".locus-repair"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return fmt.Errorf("clone %s: repair packed-refs: %w", dir, err)
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("clone %s: repair packed-refs: %w", dir, err)
	}
	slog.Warn("dropped peeled lines that followed no ref from the clone's packed-refs", "dir", dir, "lines", dropped)
	return nil
}

// cliMayHelp reports whether the git CLI could succeed where go-git failed:
// not when the repository does not exist or the credentials are refused.
func cliMayHelp(err error) bool {
	for _, e := range []error{transport.ErrRepositoryNotFound, transport.ErrAuthenticationRequired,
		transport.ErrAuthorizationFailed, transport.ErrInvalidAuthMethod, git.ErrRepositoryNotExists} {
		if errors.Is(err, e) {
			return false
		}
	}
	return true
}

// isSSHURL reports whether git reaches u over ssh: an ssh:// (or
// git+ssh://, ssh+git://) URL, or scp's form `[user@]host:path`.
func isSSHURL(u string) bool {
	if scheme, _, ok := strings.Cut(u, "://"); ok {
		return scheme == "ssh" || scheme == "git+ssh" || scheme == "ssh+git"
	}
	colon := strings.IndexByte(u, ':')
	return colon > 0 && !strings.ContainsRune(u[:colon], '/')
}

// userChoseSSH reports whether the user set the command git reaches ssh
// remotes with (GIT_SSH_COMMAND, GIT_SSH, or core.sshCommand in any of
// git's configuration files); cliFetch then leaves it alone. Otherwise it
// runs ssh in batch mode: nobody answers a prompt for a host key to trust
// or a key's passphrase in a worker, and a prompt would hold the activity
// until it timed out, where go-git fails at once.
func userChoseSSH(dir string) bool {
	if os.Getenv("GIT_SSH_COMMAND") != "" || os.Getenv("GIT_SSH") != "" {
		return true
	}
	out, err := exec.Command(gitBinary(), "--git-dir", dir, "config", "--get", "core.sshCommand").Output()
	return err == nil && strings.TrimSpace(string(out)) != ""
}

// cliFetch runs `git fetch` into the bare clone at dir with the refspecs go-git
// would have used. A token for http(s) travels as an extra header set through
// the environment, never on the command line. git's progress goes to
// progress when it is not nil, as go-git's does.
func cliFetch(ctx context.Context, dir, u, ref string, auth transport.AuthMethod, progress io.Writer) error {
	args := []string{"--git-dir", dir, "fetch", "--quiet", "--force", "--prune", "--tags", u}
	if progress != nil {
		args[3] = "--progress" // in place of --quiet: git prints progress only when asked, its stderr being no terminal
	}
	for _, s := range refSpecs(ref) {
		args = append(args, s.String())
	}
	cmd := exec.CommandContext(ctx, gitBinary(), args...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	if isSSHURL(u) && !userChoseSSH(dir) {
		cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	}
	if ba, ok := auth.(*http.BasicAuth); ok && (strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "http://")) {
		cred := base64.StdEncoding.EncodeToString([]byte(ba.Username + ":" + ba.Password))
		cmd.Env = append(cmd.Env, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=http.extraHeader", "GIT_CONFIG_VALUE_0=Authorization: Basic "+cred)
	}
	var out tailBuffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&out, progress)
	}
	if err := cmd.Run(); err != nil {
		return classify(fmt.Errorf("fetch %s: git fetch: %v: %s", redact(u), err, withoutProgress(out.String())))
	}
	return nil
}

// gitProgress matches the lines of git's progress meter.
var gitProgress = regexp.MustCompile(`^(remote: )?(Enumerating|Counting|Compressing|Receiving|Resolving|Unpacking|Total) `)

// withoutProgress is what git printed, less its progress meter (updated
// in place with carriage returns): what it says when it fails.
func withoutProgress(out string) string {
	var keep []string
	for _, line := range strings.FieldsFunc(out, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if line = strings.TrimSpace(line); line != "" && !gitProgress.MatchString(line) {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// tailBuffer keeps the last 8 KiB written to it: what git says when it
// fails, without a long fetch's progress lines piling up.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if over := len(t.b) - 8<<10; over > 0 {
		t.b = append(t.b[:0], t.b[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }

// redact masks credentials embedded in a URL before it is logged.
func redact(u string) string {
	masked, _ := schema.RedactURL(u)
	return masked
}

func fetch(ctx context.Context, repo *git.Repository, u, ref string, auth transport.AuthMethod, progress io.Writer) error {
	err := repo.FetchContext(ctx, &git.FetchOptions{
		RemoteName: "origin", RemoteURL: u, Auth: auth, Progress: progress, Force: true, Prune: true,
		RefSpecs: refSpecs(ref), Tags: git.AllTags,
	})
	switch {
	case err == nil, errors.Is(err, git.NoErrAlreadyUpToDate):
		return nil
	case errors.Is(err, transport.ErrEmptyRemoteRepository):
		return errRemoteEmpty
	default:
		return classify(fmt.Errorf("fetch %s: %w", u, err))
	}
}

// classify marks errors that retrying cannot fix.
func classify(err error) error {
	for _, perm := range []error{transport.ErrRepositoryNotFound, transport.ErrAuthenticationRequired,
		transport.ErrAuthorizationFailed, transport.ErrInvalidAuthMethod, git.ErrRepositoryNotExists,
		plumbing.ErrObjectNotFound, transport.ErrEmptyUploadPackRequest} {
		if errors.Is(err, perm) {
			return fmt.Errorf("%w (%w)", err, ErrPermanent)
		}
	}
	msg := err.Error()
	for _, s := range []string{"does not appear to be a git repository", "not a git repository", "repository not found",
		"invalid pkt-len", "unsupported scheme", "malformed", "invalid", "corruption", "corrupt"} {
		if strings.Contains(msg, s) {
			return fmt.Errorf("%w (%w)", err, ErrPermanent)
		}
	}
	return err
}

// resolve finds the commit that ref names in the clone.
func resolve(repo *git.Repository, dir, ref string) (SyncResult, error) {
	var res SyncResult
	if st, err := repo.Storer.Shallow(); err == nil && len(st) > 0 {
		res.Shallow = true
		return res, fmt.Errorf("clone %s: %w", dir, shallowError(dir, st[0]))
	}
	refs, err := repo.References()
	if err != nil {
		return res, fmt.Errorf("clone %s: list refs: %w", dir, err)
	}
	any := false
	refs.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference {
			any = true
		}
		return nil
	})
	if !any && ref == "" {
		res.Empty = true
		return res, nil
	}
	h, err := resolveRef(repo, ref)
	if err != nil {
		return res, fmt.Errorf("clone %s: ref %q: %w", dir, ref, err)
	}
	res.Head = h
	return res, nil
}

func resolveRef(repo *git.Repository, ref string) (Hash, error) {
	var candidates []plumbing.ReferenceName
	if ref == "" {
		candidates = []plumbing.ReferenceName{remoteHead, plumbing.HEAD}
	} else {
		if h, ok := parseHex([]byte(ref)); ok {
			return peelToCommit(repo, h)
		}
		candidates = []plumbing.ReferenceName{plumbing.ReferenceName(ref), plumbing.NewBranchReferenceName(ref),
			plumbing.NewTagReferenceName(ref), plumbing.NewRemoteReferenceName("origin", ref)}
	}
	for _, name := range candidates {
		r, err := repo.Reference(name, true)
		if err == nil {
			return peelToCommit(repo, r.Hash())
		}
	}
	if ref == "" {
		// The remote HEAD points at a branch that does not exist; take the
		// first of main/master if present.
		for _, b := range []string{"main", "master"} {
			if r, err := repo.Reference(plumbing.NewBranchReferenceName(b), true); err == nil {
				return peelToCommit(repo, r.Hash())
			}
		}
		return ZeroHash, fmt.Errorf("HEAD does not resolve to a commit: %w", ErrPermanent)
	}
	// An abbreviated commit id.
	if h, err := repo.ResolveRevision(plumbing.Revision(ref)); err == nil {
		return peelToCommit(repo, *h)
	}
	return ZeroHash, fmt.Errorf("no such branch, tag or commit: %w", ErrPermanent)
}

func peelToCommit(repo *git.Repository, h Hash) (Hash, error) {
	for i := 0; i < 10; i++ {
		o, err := repo.Object(plumbing.AnyObject, h)
		if err != nil {
			return ZeroHash, fmt.Errorf("object %s: %w (%w)", h, err, ErrPermanent)
		}
		switch v := o.(type) {
		case *object.Commit:
			return v.Hash, nil
		case *object.Tag:
			h = v.Target
		default:
			return ZeroHash, fmt.Errorf("object %s is a %s, not a commit: %w", h, o.Type(), ErrPermanent)
		}
	}
	return ZeroHash, fmt.Errorf("tag chain from %s too long: %w", h, ErrPermanent)
}

// Resolve returns the commit that ref names in the git directory (or working
// copy) dir, without fetching; "" means HEAD.
func Resolve(dir, ref string) (Hash, error) {
	repo, err := git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return ZeroHash, fmt.Errorf("open %s: %w", dir, err)
	}
	h, err := resolveRef(repo, ref)
	if err != nil {
		return ZeroHash, fmt.Errorf("%s: ref %q: %w", dir, ref, err)
	}
	return h, nil
}
