package search

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/locus-dev/locus/internal/rank/crossenc"
	"github.com/locus-dev/locus/internal/spider"
)

// crossEncoders holds the cross-encoders a process has opened, by
// directory and the modification time of its manifest and model (a model
// trained again in place is opened again).
var crossEncoders = struct {
	sync.Mutex
	m map[ceKey]*crossenc.Scorer
}{m: map[ceKey]*crossenc.Scorer{}}

type ceKey struct {
	dir                 string
	manifest, model     int64
	manifestSz, modelSz int64
}

// LoadCrossEncoder opens the cross-encoder in dir once per process (see
// crossenc.Open for what is refused).
func LoadCrossEncoder(dir string) (*crossenc.Scorer, error) {
	k := ceKey{dir: dir}
	for _, f := range []struct {
		name       string
		mtime, len *int64
	}{{crossenc.ManifestFile, &k.manifest, &k.manifestSz}, {crossenc.ModelFile, &k.model, &k.modelSz}} {
		st, err := os.Stat(dir + string(os.PathSeparator) + f.name)
		if err != nil {
			return nil, fmt.Errorf("cross-encoder %s: %w", dir, err)
		}
		*f.mtime, *f.len = st.ModTime().UnixNano(), st.Size()
	}
	crossEncoders.Lock()
	defer crossEncoders.Unlock()
	if s := crossEncoders.m[k]; s != nil {
		return s, nil
	}
	// One thread: queries run side by side, each on a core.
	s, err := crossenc.Open(dir, 1)
	if err != nil {
		return nil, err
	}
	for old, o := range crossEncoders.m {
		if old.dir == dir {
			o.Close()
			delete(crossEncoders.m, old)
		}
	}
	crossEncoders.m[k] = s
	return s, nil
}

// secondStage reorders the first crossenc.DefaultTop of ranking by the
// cross-encoder of p (none: ranking as it is).
func secondStage(ctx context.Context, p Params, issue string, ranking []spider.Scored, lg *loadedGraph) ([]spider.Scored, error) {
	if p.CrossEncoder == "" {
		return ranking, nil
	}
	s, err := LoadCrossEncoder(p.CrossEncoder)
	if err != nil {
		return nil, err
	}
	return s.Rerank(ctx, issue, ranking, func(id string) string { return lg.code[id] }, crossenc.DefaultTop)
}
