package badinput

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/locus-dev/locus/internal/testutil/gitfixture"
)

// diskCases: a data dir on a full disk, and clones left lacking objects.
var diskCases = []badCase{
	{
		name:  "disk-full-reindex",
		input: "a re-index after a new commit of 4 MiB with the data dir on a full filesystem (a 32 MiB tmpfs filled to 768 KiB free)",
		want:  "exit 1 within seconds, saying the disk is full and naming the path that could not be written; the published index and the clone stay as they were, and once space is freed the same command indexes the new commit",
		setup: func(s *sandbox) []string {
			mountSmallDisk(s, "32m")
			r := indexedRepo(s)
			// The fetch (a pack of about 2 MiB) cannot fit; the embedded
			// server's SQLite, on the same disk, has room to record the run,
			// so that git, not SQLite, is the writer that finds it full.
			r.WriteBytes("data.bin", randomText(s, 4<<20))
			r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 3\n"})
			s.vars["HEAD"] = r.Commit("four megabytes of data")
			s.vars["SRC"] = r.Dir
			fillDisk(s, 768<<10)
			return []string{"index", "disk/r=" + r.Dir}
		},
		code:  1,
		names: []string{"the disk is full", "no space left on device", "{{DATA}}"},
		check: func(s *sandbox, r result) {
			unchanged(s, "disk/r")
			cloneConnected(s, "disk/r")
			if err := os.Remove(filepath.Join(s.data, "filler")); err != nil {
				s.t.Fatal(err)
			}
			again := s.locus("index", "disk/r="+s.vars["SRC"])
			if again.code != 0 {
				s.t.Fatalf("index after freeing space: %v", again)
			}
			if m := s.indexed("disk/r"); m.Head != s.vars["HEAD"] {
				s.t.Errorf("after freeing space disk/r is at %s, want %s", m.Head, s.vars["HEAD"])
			}
		},
	},
	{
		name:  "disk-full-temporal-state",
		input: "a re-index after a new commit with the data dir on a filesystem with 8 KiB free, too little for the embedded Temporal server to record the run in its SQLite database",
		want:  "exit 1 within seconds, saying the disk holding the server's state (`DATA/temporal`) is full, in SQLite's words; the published index stays as it was",
		setup: func(s *sandbox) []string {
			mountSmallDisk(s, "32m")
			r := indexedRepo(s)
			r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 3\n"})
			r.Commit("triple")
			fillDisk(s, 8<<10)
			return []string{"index", "disk/r=" + r.Dir}
		},
		code:  1,
		names: []string{"the disk holding {{DATA}}/temporal is full", "database or disk is full"},
		check: func(s *sandbox, r result) { unchanged(s, "disk/r") },
	},
	{
		name:  "disk-full-temporal-state-localize",
		input: "`localize` against an indexed repository with the data dir on a filesystem with 8 KiB free, too little for the embedded Temporal server to record the run",
		want:  "exit 1 within seconds, saying the disk holding the server's state (`DATA/temporal`) is full, in SQLite's words; the published index stays as it was",
		setup: func(s *sandbox) []string {
			mountSmallDisk(s, "32m")
			indexedRepo(s)
			fillDisk(s, 8<<10)
			return []string{"localize", "--repo", "disk/r", "helper returns the wrong number"}
		},
		code:  1,
		names: []string{"the disk holding {{DATA}}/temporal is full", "database or disk is full"},
		check: func(s *sandbox, r result) { unchanged(s, "disk/r") },
	},
	{
		name:  "disk-full-temporal-state-backlog",
		input: "a `backlog` of one issue against an indexed repository with the data dir on a filesystem with 8 KiB free",
		want:  "exit 1 within seconds, saying the disk holding the server's state (`DATA/temporal`) is full, in SQLite's words; the published index stays as it was",
		setup: func(s *sandbox) []string {
			mountSmallDisk(s, "32m")
			indexedRepo(s)
			args := backlogArgs(s, "issues.jsonl", `{"id": "one", "repo": "disk/r", "problem_statement": "helper returns the wrong number"}`+"\n")
			fillDisk(s, 8<<10)
			return args
		},
		code:  1,
		names: []string{"the disk holding {{DATA}}/temporal is full", "database or disk is full"},
		check: func(s *sandbox, r result) { unchanged(s, "disk/r") },
	},
	{
		name:  "clone-damaged-by-failed-fetch",
		input: "a clone whose refs point at a commit whose tree it lacks and that has no record of a connectivity check (what a fetch that fell back to go-git on a full disk left)",
		want:  "the next index finds the clone damaged, logs that it clones afresh, and indexes the commit (exit 0); no \"object not found\"",
		setup: func(s *sandbox) []string {
			r := indexedRepo(s)
			r.Write(map[string]string{"util.py": "def twice(n):\n    return n * 2\n"})
			s.vars["HEAD"] = r.Commit("add twice")
			clone := clonePath(s, "disk/r")
			git(s, "--git-dir", clone, "fetch", "-q", r.Dir, "+refs/heads/*:refs/heads/*")
			tree := strings.TrimSpace(git(s, "--git-dir", clone, "rev-parse", s.vars["HEAD"]+"^{tree}"))
			removeLooseObject(s, clone, tree)
			// A clone made before the check has no record of one.
			if err := os.Remove(filepath.Join(clone, "locus-connectivity")); err != nil {
				s.t.Fatal(err)
			}
			return []string{"index", "disk/r=" + r.Dir}
		},
		names: []string{"cloning afresh"},
		check: func(s *sandbox, r result) {
			if m := s.indexed("disk/r"); m.Head != s.vars["HEAD"] {
				s.t.Errorf("disk/r is at %s, want %s", m.Head, s.vars["HEAD"])
			}
			cloneConnected(s, "disk/r")
		},
	},
	{
		name:  "clone-damaged-by-hand",
		input: "a clone with a blob removed by hand (a loose object deleted), then a new commit in the repository",
		want:  "the next index finds the clone damaged after its fetch, clones afresh, and indexes the new commit (exit 0)",
		setup: func(s *sandbox) []string {
			r := indexedRepo(s)
			clone := clonePath(s, "disk/r")
			removeLooseObject(s, clone, strings.TrimSpace(git(s, "--git-dir", clone, "rev-parse", "HEAD:lib.py")))
			r.Write(map[string]string{"lib.py": "def helper(n):\n    return n * 4\n"})
			s.vars["HEAD"] = r.Commit("quadruple")
			return []string{"index", "disk/r=" + r.Dir}
		},
		names: []string{"cloning afresh"},
		check: func(s *sandbox, r result) {
			if m := s.indexed("disk/r"); m.Head != s.vars["HEAD"] {
				s.t.Errorf("disk/r is at %s, want %s", m.Head, s.vars["HEAD"])
			}
			cloneConnected(s, "disk/r")
		},
	},
}

// indexedRepo is a small repository indexed as disk/r, its stored files
// noted for unchanged.
func indexedRepo(s *sandbox) *gitfixture.Repo {
	s.t.Helper()
	r := s.simpleRepo("r")
	if res := s.locus("index", "disk/r="+r.Dir); res.code != 0 {
		s.t.Fatalf("first index: %v", res)
	}
	s.vars["BEFORE"] = snapshotJSON(s, "disk/r")
	return r
}

// unchanged fails the case unless repo's stored files are those
// indexedRepo noted.
func unchanged(s *sandbox, repo string) {
	s.t.Helper()
	if got := snapshotJSON(s, repo); got != s.vars["BEFORE"] {
		s.t.Errorf("the stored index of %s changed:\nbefore %s\nafter  %s", repo, s.vars["BEFORE"], got)
	}
}

// envRequireSmallDisk, set (as CI sets it), makes a case that cannot mount
// its small filesystem fail instead of skipping.
const envRequireSmallDisk = "LOCUS_REQUIRE_SMALL_DISK"

// mountSmallDisk mounts a tmpfs of size as the sandbox's data dir, holding
// a copy of the seeded store; it is unmounted when the case ends. Mounting
// needs root (or CAP_SYS_ADMIN): elsewhere the case skips, unless
// LOCUS_REQUIRE_SMALL_DISK is set; CI sets it, and tools/skipcheck fails a
// skip there anyway.
func mountSmallDisk(s *sandbox, size string) {
	s.t.Helper()
	dir := filepath.Join(s.dir, "small-disk")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	// As root, or else through sudo where it asks for no password; the
	// filesystem belongs to whoever runs the suite.
	opts := fmt.Sprintf("size=%s,uid=%d,gid=%d,mode=0755", size, os.Getuid(), os.Getgid())
	var prefix []string
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput()
	if err != nil && os.Getuid() != 0 {
		if sudoOut, sudoErr := exec.Command("sudo", "-n", "mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); sudoErr == nil {
			prefix, err = []string{"sudo", "-n"}, nil
		} else {
			out = append(out, append([]byte("; sudo -n: "), sudoOut...)...)
		}
	}
	if err != nil {
		msg := fmt.Sprintf("a full disk needs a small filesystem: mount -t tmpfs failed (%v: %s); run the suite as root", err, strings.TrimSpace(string(out)))
		if os.Getenv(envRequireSmallDisk) != "" {
			s.t.Fatalf("%s (%s is set)", msg, envRequireSmallDisk)
		}
		s.t.Skipf("%s, or set %s to make this a failure", msg, envRequireSmallDisk)
	}
	s.t.Cleanup(func() {
		args := append(prefix, "umount", dir)
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			s.t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	if err := copyTree(s.store(), filepath.Join(dir, "store")); err != nil {
		s.t.Fatalf("copy the seeded store onto the small disk: %v", err)
	}
	s.data = dir
	s.vars["DATA"] = dir
}

// fillDisk fills the sandbox's data dir's filesystem until keep bytes are
// left, with the file DATA/filler.
func fillDisk(s *sandbox, keep int64) {
	s.t.Helper()
	out, err := exec.Command("df", "-B1", "--output=avail", s.data).Output()
	if err != nil {
		s.t.Fatalf("df %s: %v", s.data, err)
	}
	fields := strings.Fields(string(out))
	avail, err := strconv.ParseInt(fields[len(fields)-1], 10, 64)
	if err != nil {
		s.t.Fatalf("df %s: %q: %v", s.data, out, err)
	}
	if avail <= keep {
		s.t.Fatalf("%d bytes free on %s, want more than %d to fill", avail, s.data, keep)
	}
	size := (avail - keep) / 4096 * 4096
	if out, err := exec.Command("fallocate", "-l", strconv.FormatInt(size, 10), filepath.Join(s.data, "filler")).CombinedOutput(); err != nil {
		s.t.Fatalf("fallocate: %v: %s", err, out)
	}
}

// randomText is n bytes of hex: text that does not compress.
func randomText(s *sandbox, n int) []byte {
	raw := make([]byte, n/2)
	if _, err := rand.Read(raw); err != nil {
		s.t.Fatal(err)
	}
	return []byte(hex.EncodeToString(raw))
}

// snapshotJSON is the stored files of repo and their hashes, as one
// comparable string.
func snapshotJSON(s *sandbox, repo string) string {
	s.t.Helper()
	snap, err := snapshot(filepath.Join(s.store(), "repos", repo))
	if err != nil {
		s.t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(snap)) {
		b.WriteString(k + "=" + snap[k][:12] + " ")
	}
	return b.String()
}

// clonePath is where the sandbox's worker keeps repo's clone.
func clonePath(s *sandbox, repo string) string {
	return filepath.Join(s.data, "clones", filepath.FromSlash(repo)+".git")
}

// cloneConnected fails the case unless git finds every object the refs
// of repo's clone reach.
func cloneConnected(s *sandbox, repo string) {
	s.t.Helper()
	clone := clonePath(s, repo)
	if out, err := exec.Command("git", "--git-dir", clone, "rev-list", "--objects", "--all", "--quiet").CombinedOutput(); err != nil {
		s.t.Errorf("the clone of %s lacks objects: %v: %s", repo, err, out)
	}
}

// git runs git for a case's setup.
func git(s *sandbox, args ...string) string {
	s.t.Helper()
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// removeLooseObject deletes object id from the bare clone at dir, which
// must hold it loose (git clone --local and small fetches leave them so).
func removeLooseObject(s *sandbox, dir, id string) {
	s.t.Helper()
	if err := os.Remove(filepath.Join(dir, "objects", id[:2], id[2:])); err != nil {
		s.t.Fatalf("remove object %s: %v (packed?)", id, err)
	}
}
