// Package locusbin builds the locus command for tests that run it as a
// process, the way a user gets it.
package locusbin

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
)

// Build builds cmd/locus into dir and returns the binary's path.
func Build(dir string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("the go tool is needed to build locus: %w", err)
	}
	out := filepath.Join(dir, "locus")
	cmd := exec.Command(goTool, "build", "-o", out, "github.com/locus-dev/locus/cmd/locus")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./cmd/locus: %v\n%s", err, stderr.String())
	}
	return out, nil
}
