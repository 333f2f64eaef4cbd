package fileblob_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/blob/drivertest"
	"github.com/locus-dev/locus/internal/blob/fileblob"
)

// noTempFiles fails the test if a writer left anything in the temp directory.
func noTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(dir, fileblob.TempDir))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("leftover temp file %s", e.Name())
	}
}

func TestConformance(t *testing.T) {
	drivertest.RunConformanceTests(t, func(t *testing.T) *blob.Bucket {
		dir := t.TempDir()
		b, err := blob.OpenFile(dir, fileblob.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			noTempFiles(t, dir)
			b.Close()
		})
		return b
	})
}

func TestCancelWithoutCloseRemovesTemp(t *testing.T) {
	dir := t.TempDir()
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(t.Context())
	w, err := b.NewWriter(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	cancel() // and never Close: the driver cleans up on its own
	deadline := time.Now().Add(5 * time.Second)
	for {
		entries, _ := os.ReadDir(filepath.Join(dir, fileblob.TempDir))
		if len(entries) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("temp file still present after cancel: %v", entries)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close after cancel = %v", err)
	}
}

func TestSymlinksCannotEscape(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Skipf("symlinks unsupported: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "secretlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "inside"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("inside", filepath.Join(dir, "innerlink")); err != nil {
		t.Fatal(err)
	}
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()

	for _, key := range []string{"out/secret", "secretlink"} {
		if data, err := b.ReadAll(ctx, key); err == nil {
			t.Errorf("ReadAll(%q) escaped the root: %q", key, data)
		}
		if _, err := b.Attributes(ctx, key); err == nil {
			t.Errorf("Attributes(%q) escaped the root", key)
		}
	}
	if err := b.WriteAll(ctx, "out/planted", []byte("x")); err == nil {
		t.Error("WriteAll through an escaping symlink succeeded")
	}
	if _, err := os.Stat(filepath.Join(outside, "planted")); err == nil {
		t.Error("a file was written outside the root")
	}
	// Links that stay inside the root are ordinary objects.
	if data, err := b.ReadAll(ctx, "innerlink"); err != nil || string(data) != "ok" {
		t.Errorf("ReadAll(innerlink) = %q, %v", data, err)
	}
	objs, err := b.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	if len(keys) != 2 || keys[0] != "innerlink" || keys[1] != "inside" {
		t.Errorf("List = %q, want [innerlink inside]", keys)
	}
	noTempFiles(t, dir)
}

// TestListDirsMatchesList: ListDirs reports a directory exactly when List
// shows an object below it, whatever else lies on disk: empty directories
// (a crash between MkdirAll and Rename), names no key can address, links.
func TestListDirsMatchesList(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"empty/a/b", "nested/empty", "nested/has", "deep/x/y/z", `bad\name`, "links", "dangling", "real", "escape"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"nested/has/o", "deep/x/y/z/o", `bad\name/o`, "real/o", "top"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"links/l":    "../top",                         // a file inside the root: an object
		"dangling/l": "../missing",                     // nothing
		"dirlink":    "real",                           // a linked directory is not descended
		"escape/l":   filepath.Join(outside, "secret"), // outside the root
		"outdir":     outside,                          // outside the root
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skipf("symlinks unsupported: %v", err)
		}
	}
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	for prefix, want := range map[string]string{
		"":         "deep/ links/ nested/ real/",
		"nested/":  "nested/has/",
		"deep/":    "deep/x/",
		"empty/":   "",
		"links/":   "",
		"top/":     "",
		"dirlink/": "",
	} {
		dirs, err := b.ListDirs(ctx, prefix)
		if err != nil {
			t.Fatalf("ListDirs(%q): %v", prefix, err)
		}
		if got := strings.Join(dirs, " "); got != want {
			t.Errorf("ListDirs(%q) = %q, want %q", prefix, got, want)
		}
		// The same, derived from the recursive listing.
		objs, err := b.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var fromList []string
		for _, o := range objs {
			if i := strings.IndexByte(o.Key[len(prefix):], '/'); i >= 0 {
				if d := o.Key[:len(prefix)+i+1]; len(fromList) == 0 || fromList[len(fromList)-1] != d {
					fromList = append(fromList, d)
				}
			}
		}
		if got := strings.Join(fromList, " "); got != want {
			t.Errorf("directories of List(%q) = %q, want %q", prefix, got, want)
		}
	}
}

func TestReservedTempDir(t *testing.T) {
	b, err := blob.OpenFile(t.TempDir(), fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	err = b.WriteAll(t.Context(), fileblob.TempDir+"/x", []byte("x"))
	if !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("write into %s: %v, want ErrInvalidKey", fileblob.TempDir, err)
	}
}

func TestStaleTempFilesRemovedOnOpen(t *testing.T) {
	dir := t.TempDir()
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	stale := filepath.Join(dir, fileblob.TempDir, "crashed.tmp")
	fresh := filepath.Join(dir, fileblob.TempDir, "inflight.tmp")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	b, err = blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale temp file kept: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("recent temp file (maybe another writer's) removed: %v", err)
	}
}

func TestDeletePrunesEmptyDirs(t *testing.T) {
	dir := t.TempDir()
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()
	for _, k := range []string{"a/b/c/d", "a/x"} {
		if err := b.WriteAll(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(ctx, "a/b/c/d"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "b")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty directory a/b kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Errorf("non-empty directory a removed: %v", err)
	}
}

// helperWriterEnv makes the test binary act as a writer that never finishes
// (see TestKilledWritersTempRemovedOnOpen).
const helperWriterEnv = "LOCUS_FILEBLOB_HELPER_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperWriterEnv); dir != "" {
		b, err := blob.OpenFile(dir, fileblob.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		w, err := b.NewWriter(context.Background(), "part.parquet")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		w.Write([]byte("half a part"))
		fmt.Println("writing")
		time.Sleep(time.Hour) // until killed
	}
	os.Exit(m.Run())
}

// tempOwner returns the "<host>.<pid>" prefix of this process's temp files.
func tempOwner(t *testing.T, b *blob.Bucket, dir string) string {
	t.Helper()
	w, err := b.NewWriter(t.Context(), "probe")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	entries, err := os.ReadDir(filepath.Join(dir, fileblob.TempDir))
	if err != nil || len(entries) != 1 {
		t.Fatalf("temp dir: %v %v", entries, err)
	}
	parts := strings.Split(entries[0].Name(), ".")
	if len(parts) != 4 || parts[1] != strconv.Itoa(os.Getpid()) {
		t.Fatalf("temp file %q: want <host>.<pid>.<random>.tmp", entries[0].Name())
	}
	return parts[0] + "." + parts[1]
}

// TestTempFilesOfDeadProcessesRemovedOnOpen: temp files of processes of this
// host that are gone are removed at once; those of live processes, of other
// hosts and of unknown names only after a day.
func TestTempFilesOfDeadProcessesRemovedOnOpen(t *testing.T) {
	dir := t.TempDir()
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	owner := tempOwner(t, b, dir)
	b.Close()
	host, _, _ := strings.Cut(owner, ".")

	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Skipf("cannot run sleep: %v", err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	deadPid, livePid := strconv.Itoa(dead.ProcessState.Pid()), strconv.Itoa(live.Process.Pid)

	for _, tc := range []struct {
		name string
		age  time.Duration
		keep bool
	}{
		{host + "." + deadPid + ".AAAA.tmp", 0, false},
		{host + "." + livePid + ".BBBB.tmp", 0, true},
		{owner + ".CCCC.tmp", 0, true}, // this process's own writer
		{"otherhost." + deadPid + ".DDDD.tmp", 0, true},
		{"otherhost." + deadPid + ".EEEE.tmp", 48 * time.Hour, false},
		{"inflight.tmp", 0, true},
		{"crashed.tmp", 48 * time.Hour, false},
		{host + ".notapid.FFFF.tmp", 0, true},
	} {
		p := filepath.Join(dir, fileblob.TempDir, tc.name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if tc.age > 0 {
			old := time.Now().Add(-tc.age)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
		defer func() {
			_, err := os.Stat(p)
			if kept := err == nil; kept != tc.keep {
				t.Errorf("%s (age %v): kept=%v, want %v", tc.name, tc.age, kept, tc.keep)
			}
		}()
	}
	b, err = blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
}

// TestKilledWritersTempRemovedOnOpen kills (SIGKILL) a process in the middle
// of a write and checks that the next Open removes what it left.
func TestKilledWritersTempRemovedOnOpen(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperWriterEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "writing\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper writer: %q %v", line, err)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no chance to clean up
		t.Fatal(err)
	}
	cmd.Wait()
	entries, _ := os.ReadDir(filepath.Join(dir, fileblob.TempDir))
	if len(entries) != 1 {
		t.Fatalf("the killed writer left %v, want one temp file", entries)
	}
	b, err := blob.OpenFile(dir, fileblob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	noTempFiles(t, dir)
	if _, err := b.Attributes(t.Context(), "part.parquet"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("the half-written object is visible: %v", err)
	}
}
