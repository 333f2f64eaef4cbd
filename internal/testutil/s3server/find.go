package s3server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const skipHelp = "set " + EnvBinary + " to a versitygw binary, or run `go install " + Module + "`"

// EnvRequire, when set (CI sets it), turns "no S3 server available" from a
// skip into a failure.
const EnvRequire = "LOCUS_REQUIRE_S3"

// unavailable skips the test, or fails it when EnvRequire is set.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv(EnvRequire) != "" {
		t.Fatalf(format+" (failing because "+EnvRequire+" is set)", args...)
	}
	t.Skipf(format, args...)
}

// findOrInstall looks in $LOCUS_VERSITYGW, PATH, then GOBIN / GOPATH/bin, and
// otherwise installs versitygw with the go command.
func findOrInstall(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(EnvBinary); p != "" {
		if !isExecutable(p) {
			t.Fatalf("s3server: %s=%q is not an executable file", EnvBinary, p)
		}
		return p
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		unavailable(t, "s3server: versitygw not found and no go command to install it: %s", skipHelp)
	}
	dirs := installDirs(goBin)
	if p := findIn(dirs); p != "" {
		return p
	}
	if len(dirs) == 0 {
		unavailable(t, "s3server: versitygw not found and `go env GOBIN GOPATH` failed: %s", skipHelp)
	}

	// go test runs packages in parallel; the lock makes one of them install
	// while the others wait and then find the binary.
	unlock, err := lockFile(filepath.Join(os.TempDir(), "locus-versitygw-install.lock"))
	if err != nil {
		unavailable(t, "s3server: lock for installing versitygw: %v; %s", err, skipHelp)
	}
	defer unlock()
	if p := findIn(dirs); p != "" {
		return p
	}
	t.Logf("s3server: installing %s (about a minute)", Module)
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "install", Module)
	// Outside any module, and without GOFLAGS such as -mod=vendor that
	// `go install pkg@version` rejects.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		unavailable(t, "s3server: go install %s failed: %v\n%s\n%s", Module, err, tail(out, 2000), skipHelp)
	}
	if p := findIn(dirs); p != "" {
		return p
	}
	unavailable(t, "s3server: versitygw installed but not found in %s; %s", strings.Join(dirs, ", "), skipHelp)
	return ""
}

// installDirs is where `go install` puts binaries: GOBIN, else GOPATH[0]/bin;
// other GOPATH entries are searched too in case of an earlier setup.
func installDirs(goBin string) []string {
	out, err := exec.Command(goBin, "env", "GOBIN", "GOPATH").Output()
	if err != nil {
		return nil
	}
	// One line per variable; an unset GOBIN is an empty first line.
	lines := strings.Split(strings.TrimRight(string(out), "\r\n"), "\n")
	if len(lines) != 2 {
		return nil
	}
	var dirs []string
	if gobin := strings.TrimSpace(lines[0]); gobin != "" {
		dirs = append(dirs, gobin)
	}
	for _, p := range filepath.SplitList(strings.TrimSpace(lines[1])) {
		if p != "" {
			dirs = append(dirs, filepath.Join(p, "bin"))
		}
	}
	return dirs
}

func findIn(dirs []string) string {
	for _, d := range dirs {
		p := filepath.Join(d, "versitygw"+exeSuffix())
		if isExecutable(p) {
			return p
		}
	}
	return ""
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && (fi.Mode().Perm()&0o111 != 0 || exeSuffix() != "")
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
