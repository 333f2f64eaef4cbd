package codegraph

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	sitter "github.com/smacker/go-tree-sitter"

	"github.com/locus-dev/locus/internal/codegraph/extract"
)

// ParseOnly reads and parses the files Build would parse, with tree-sitter
// alone and the same number of workers: the baseline the graph builder's
// speed is measured against. It returns the files and bytes parsed.
func ParseOnly(ctx context.Context, files []File, opts Options) (nfiles int, nbytes int64, err error) {
	opts.defaults()
	excluded := excludeSet(opts.Exclude)
	type job struct {
		path string
		lang Language
		src  []byte
	}
	jobs := make(chan job)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	for w := 0; w < opts.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				err := extract.Parse(ctx, extract.Grammar(j.path, j.lang), j.path, j.src, func(*sitter.Node) error { return nil })
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	hdr := headerLanguage(files, excluded) // as Build
	var parsable []File
	for _, f := range files {
		name, ok := DetectLanguage(f.Path)
		if ok && skipPath(f, excluded, name, ok) == "" {
			parsable = append(parsable, f)
		}
	}
	readAhead(parsable) // as Build
	for _, f := range parsable {
		data, rerr := f.Read()
		if rerr != nil {
			close(jobs)
			wg.Wait()
			return 0, 0, fmt.Errorf("read %s: %w", f.Path, rerr)
		}
		if reason, _ := skipContent(data, opts.MaxFileBytes); reason != "" {
			continue
		}
		nfiles++
		nbytes += int64(len(data))
		j := job{f.Path, LanguageFor(f.Path), append([]byte(nil), data...)}
		if IsHeader(f.Path) {
			j.lang = hdr
		}
		jobs <- j
	}
	close(jobs)
	wg.Wait()
	if e, ok := firstErr.Load().(error); ok {
		return 0, 0, e
	}
	return nfiles, nbytes, nil
}
