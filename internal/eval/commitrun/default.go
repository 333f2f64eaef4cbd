package commitrun

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/locus-dev/locus/internal/rank"
)

//go:embed models
var shipped embed.FS

// DefaultModelName names the shipped file ranker in errors and reports.
const DefaultModelName = "the shipped file ranker (internal/eval/commitrun/models/files.json)"

var defaultModel = sync.OnceValues(func() (*rank.Model, error) {
	data, err := shipped.ReadFile("models/files.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, rank.ErrNoDefault
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", DefaultModelName, err)
	}
	return rank.ParseTableModel(FileTable, DefaultModelName, data)
})

// LoadModel reads the learned file ranker at path; "" is the shipped one
// (rank.ErrNoDefault when the build has none).
func LoadModel(path string) (*rank.Model, error) {
	if path == "" {
		return defaultModel()
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("file ranking model %s: %w", path, err)
	}
	return rank.ParseTableModel(FileTable, path, data)
}
