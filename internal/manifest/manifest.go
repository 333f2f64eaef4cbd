// Package manifest reads and publishes repos/<repo>/manifest.json, the record of what is indexed.
package manifest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/schema"
)

// ErrStale is returned by Publish when the manifest moved since the scrape began.
var ErrStale = errors.New("manifest changed since the scrape started")

// ErrOtherRepository is returned when a repository is indexed under a name
// that already holds a different repository (another root commit).
var ErrOtherRepository = errors.New("name holds another repository")

// CheckIdentity refuses to index the repository at url with root commit root
// under a name whose manifest prev records another repository. A manifest
// written before roots were recorded (Root "") accepts any root: the next
// index fills it in.
func CheckIdentity(prev *schema.Manifest, url, root string) error {
	if prev == nil || prev.Root == "" || root == "" || prev.Root == root {
		return nil
	}
	return fmt.Errorf("repository name %q already holds %s (root %s); this is %s (root %s): give it another name, e.g. %s: %w",
		prev.Repo, prev.URL, shortID(prev.Root), url, shortID(root), suggestName(prev.Repo, url), ErrOtherRepository)
}

// suggestName is an example spec that indexes url under a name other than
// taken: owner/name from a remote URL, parent/dir for a local path.
func suggestName(taken schema.RepoName, url string) string {
	var cands []string
	if schema.IsRemoteURL(url) {
		if n, err := schema.RepoNameFromURL(url); err == nil {
			cands = append(cands, string(n))
		}
	} else {
		p := strings.TrimSuffix(strings.TrimSuffix(strings.TrimRight(filepath.ToSlash(url), "/"), "/.git"), ".git")
		if dir, base := path.Split(p); base != "" {
			cands = append(cands, path.Base(dir)+"/"+base)
		}
	}
	_, last, ok := strings.Cut(string(taken), "/")
	if !ok {
		last = string(taken)
	}
	cands = append(cands, "other/"+last)
	for _, c := range cands {
		if n, err := schema.ParseRepoName(c); err == nil && n != taken {
			return string(n) + "=" + url
		}
	}
	return "owner/name=" + url
}

func shortID(h string) string {
	if len(h) > 7 {
		return h[:7]
	}
	return h
}

// Read returns the repository's manifest, or nil if nothing is published yet.
func Read(ctx context.Context, b *blob.Bucket, repo schema.RepoName) (*schema.Manifest, error) {
	key := repo.ManifestKey()
	data, err := b.ReadAll(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", key, err)
	}
	var m schema.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest %s: %w: %v", key, ErrDamaged, err)
	}
	if m.Version > schema.ManifestVersion {
		return nil, fmt.Errorf("manifest %s: version %d is newer than this locus understands (%d)", key, m.Version, schema.ManifestVersion)
	}
	return &m, nil
}

// ErrDamaged is the error of a manifest that is not one (not JSON, cut
// short): SetAsideDamaged lets the repository be indexed again.
var ErrDamaged = errors.New("damaged (not a manifest)")

// SetAsideDamaged moves a damaged manifest of repo to its
// DamagedManifestKey, where it is kept, so that an index run starts over
// from the source as for a repository never indexed: its history is
// scraped again, its graph and search indexes are built again (the
// embeddings cache is reused) and a new manifest is published. It reports
// whether there was one to move; a readable manifest, or one of a newer
// version, stays where it is.
func SetAsideDamaged(ctx context.Context, b *blob.Bucket, repo schema.RepoName) (bool, error) {
	_, err := Read(ctx, b, repo)
	if !errors.Is(err, ErrDamaged) {
		return false, nil
	}
	key := repo.ManifestKey()
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		return false, fmt.Errorf("read manifest %s: %w", key, err)
	}
	if err := b.WriteAll(ctx, repo.DamagedManifestKey(), data); err != nil {
		return false, fmt.Errorf("keep damaged manifest %s: %w", key, err)
	}
	if err := b.Delete(ctx, key); err != nil && !errors.Is(err, blob.ErrNotFound) {
		return false, fmt.Errorf("set aside damaged manifest %s: %w", key, err)
	}
	return true, nil
}

// Update describes what a successful IndexRepo adds.
type Update struct {
	Repo   schema.RepoSpec
	Head   string // "" for an empty repository
	Scrape schema.ScrapeResult
	// Graph is the code graph built at Head; nil keeps the previous one.
	Graph *schema.GraphInfo
	// Search describes the retrieval indexes built from Graph; nil keeps the previous.
	Search    *schema.SearchInfo
	IndexedAt time.Time
	// HostQueue is the task queue of the host holding the clone that was
	// indexed; "" keeps the previous.
	HostQueue string
}

// Publish writes the new manifest (atomically replacing the old one) and then
// removes commit parts and file-id maps that no manifest refers to any more:
// leftovers of interrupted runs, or maps of older heads.
func Publish(ctx context.Context, b *blob.Bucket, u Update) (*schema.Manifest, error) {
	repo := u.Repo.Name
	prev, err := Read(ctx, b, repo)
	if err != nil {
		return nil, err
	}
	prevHead := ""
	if prev != nil {
		prevHead = prev.Head
	}
	if u.Scrape.Head != "" && u.Scrape.BaseHead != prevHead {
		return nil, fmt.Errorf("publish %s: scraped from %q but the manifest is at %q: %w", repo, u.Scrape.BaseHead, prevHead, ErrStale)
	}
	if err := CheckIdentity(prev, u.Repo.URL, u.Scrape.Root); err != nil {
		return nil, fmt.Errorf("publish %s: %w", repo, err)
	}
	if u.Head == "" && u.Scrape.Head == "" && prev != nil && prev.Head != "" {
		// An empty repository would keep the old history under a new URL.
		return nil, fmt.Errorf("publish %s: repository name %q already holds %s (%d commits, root %s); %s has no commits: give it another name, e.g. %s: %w",
			repo, repo, prev.URL, prev.Commits, shortID(prev.Root), u.Repo.URL, suggestName(repo, u.Repo.URL), ErrOtherRepository)
	}
	m := schema.Manifest{Version: schema.ManifestVersion, Repo: repo, URL: u.Repo.URL, Ref: u.Repo.Ref,
		IndexedAt: u.IndexedAt.UTC(), Versions: map[string]int{"commits": schema.CommitsVersion}}
	if prev != nil {
		m.Root, m.Head, m.Commits, m.Rows, m.Parts, m.FileIDs, m.Graph, m.Search = prev.Root, prev.Head, prev.Commits, prev.Rows, prev.Parts, prev.FileIDs, prev.Graph, prev.Search
		m.HostQueue, m.Memory = prev.HostQueue, prev.Memory
	}
	if u.HostQueue != "" {
		m.HostQueue = u.HostQueue
	}
	if u.Scrape.Root != "" {
		m.Root = u.Scrape.Root
	}
	if u.Scrape.Replace {
		// The history was rewritten: the scrape holds all of it. The old parts
		// stay valid under the old manifest until the new one is written, and
		// the sweep below removes them after.
		m.Commits, m.Rows, m.Parts = 0, 0, nil
	}
	if u.Graph != nil {
		m.Graph = u.Graph
		m.Versions["graph"] = schema.GraphVersion
	}
	if u.Search != nil {
		m.Search = u.Search
	}
	if u.Scrape.Memory != nil {
		m.Memory = u.Scrape.Memory
	} else if u.Scrape.Replace {
		m.Memory = nil // of the old history
	}
	if u.Scrape.Head != "" {
		m.Head = u.Scrape.Head
		m.FileIDs = u.Scrape.FileIDs
		m.Commits += u.Scrape.NewCommits
		for _, p := range u.Scrape.Parts {
			m.Parts = append(m.Parts, p)
			m.Rows += p.Rows
		}
	}
	m.MissingRows = schema.MissingRows(m.Parts)
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := b.WriteAll(ctx, repo.ManifestKey(), append(data, '\n')); err != nil {
		return nil, fmt.Errorf("publish %s: %w", repo, err)
	}
	if err := sweep(ctx, b, &m); err != nil {
		return nil, fmt.Errorf("publish %s: %w", repo, err)
	}
	return &m, nil
}

// sweep deletes commit parts, file-id maps and graphs that m does not reference.
func sweep(ctx context.Context, b *blob.Bucket, m *schema.Manifest) error {
	keep := map[string]bool{m.FileIDs: true}
	for _, p := range m.Parts {
		keep[p.Key] = true
	}
	if m.Graph != nil {
		keep[m.Graph.NodesKey], keep[m.Graph.EdgesKey], keep[m.Graph.ReportKey] = true, true, true
		keep[m.Graph.ExtractsKey] = m.Graph.ExtractsKey != ""
	}
	if m.Search != nil {
		keep[m.Search.SparseKey] = true
		keep[m.Search.SparseDocsKey] = m.Search.SparseDocsKey != ""
	}
	if m.Memory != nil {
		keep[m.Memory.Key] = true
	}
	for _, prefix := range m.Repo.ManifestPrefixes() {
		objs, err := b.List(ctx, prefix)
		if err != nil {
			return err
		}
		for _, o := range objs {
			if !keep[o.Key] {
				if err := b.Delete(ctx, o.Key); err != nil && !errors.Is(err, blob.ErrNotFound) {
					return err
				}
			}
		}
	}
	return nil
}

// List returns every published manifest in the store, sorted by repository.
// One unreadable manifest fails the whole listing; ListAll isolates it.
func List(ctx context.Context, b *blob.Bucket) ([]schema.Manifest, error) {
	out, bad, err := ListAll(ctx, b)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return nil, &bad[0]
	}
	return out, nil
}

// RepoError is a repository whose manifest could not be read.
type RepoError struct {
	Repo schema.RepoName
	Key  string
	Err  error
}

func (e *RepoError) Error() string { return e.Err.Error() }
func (e *RepoError) Unwrap() error { return e.Err }

// ListAll returns every readable published manifest, sorted by repository,
// and one RepoError per repository whose manifest is damaged (or newer than
// this locus), so that one repository's damage does not hide the others. err
// is only for a store that cannot be listed at all.
//
// It lists directories, not objects: the owners under repos/, then the names
// under each owner, and reads repos/<dir>/manifest.json for every one of them
// (a name without an owner is a directory directly under repos/), so its cost
// grows with the number of repositories, not with what they store.
func ListAll(ctx context.Context, b *blob.Bucket) ([]schema.Manifest, []RepoError, error) {
	owners, err := b.ListDirs(ctx, "repos/")
	if err != nil {
		return nil, nil, fmt.Errorf("list manifests: %w", err)
	}
	names := make([][]string, len(owners))
	err = forEach(ctx, len(owners), func(ctx context.Context, i int) error {
		var err error
		names[i], err = b.ListDirs(ctx, owners[i])
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list manifests: %w", err)
	}
	var repos []schema.RepoName
	for i, owner := range owners {
		for _, dir := range append([]string{owner}, names[i]...) {
			repo, err := schema.ParseRepoName(strings.TrimSuffix(strings.TrimPrefix(dir, "repos/"), "/"))
			if err != nil || repo.Prefix() != dir {
				continue // not ours (a name we never write)
			}
			repos = append(repos, repo)
		}
	}
	manifests := make([]*schema.Manifest, len(repos))
	errs := make([]error, len(repos))
	err = forEach(ctx, len(repos), func(ctx context.Context, i int) error {
		manifests[i], errs[i] = Read(ctx, b, repos[i])
		if errs[i] != nil && ctx.Err() != nil {
			return errs[i]
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var out []schema.Manifest
	var bad []RepoError
	for i, repo := range repos {
		switch {
		case errs[i] != nil:
			bad = append(bad, RepoError{Repo: repo, Key: repo.ManifestKey(), Err: errs[i]})
		case manifests[i] != nil: // nil: a directory without a manifest
			out = append(out, *manifests[i])
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Repo < out[j].Repo })
	sort.Slice(bad, func(i, j int) bool { return bad[i].Repo < bad[j].Repo })
	return out, bad, nil
}

// listConcurrency bounds ListAll's requests in flight: enough to hide S3's
// per-request latency, few enough to stay a polite client.
const listConcurrency = 16

// forEach calls fn(ctx, i) for i in [0, n), listConcurrency at a time, and
// returns the first error; the others' ctx is then cancelled.
func forEach(ctx context.Context, n int, fn func(context.Context, int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, listConcurrency) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					continue
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
