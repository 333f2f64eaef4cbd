package rank

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sync"
)

//go:embed models
var shipped embed.FS

// DefaultModelName names the shipped model in errors and results.
const DefaultModelName = "the shipped default model (internal/rank/models/default.json)"

// ErrNoDefault: this build ships no default model.
var ErrNoDefault = errors.New("no default ranking model is shipped with this build")

var defaultModel = sync.OnceValues(func() (*Model, error) {
	data, err := shipped.ReadFile("models/default.json")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoDefault
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", DefaultModelName, err)
	}
	return ParseModel(DefaultModelName, data)
})

// Default is the shipped model (ErrNoDefault when the build has none;
// ErrBadModel when it does not load, as after a feature version change
// that was not followed by training it again).
func Default() (*Model, error) { return defaultModel() }
