package codegraph

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	sitter "github.com/smacker/go-tree-sitter"
	"github.com/smacker/go-tree-sitter/c"
	"github.com/smacker/go-tree-sitter/cpp"
	"github.com/smacker/go-tree-sitter/golang"
	"github.com/smacker/go-tree-sitter/java"
	"github.com/smacker/go-tree-sitter/javascript"
	"github.com/smacker/go-tree-sitter/python"
	"github.com/smacker/go-tree-sitter/rust"
	"github.com/smacker/go-tree-sitter/typescript/tsx"
	"github.com/smacker/go-tree-sitter/typescript/typescript"
)

// grammar is the tree-sitter grammar of a file in language l, for the
// parse-only baseline.
func grammar(path string, l Language) *sitter.Language {
	switch l.Name() {
	case "rust":
		return rust.GetLanguage()
	case "c":
		return c.GetLanguage()
	case "cpp":
		return cpp.GetLanguage()
	case "python":
		return python.GetLanguage()
	case "go":
		return golang.GetLanguage()
	case "java":
		return java.GetLanguage()
	case "javascript":
		return javascript.GetLanguage()
	case "typescript":
		if strings.HasSuffix(strings.ToLower(path), ".tsx") {
			return tsx.GetLanguage()
		}
		return typescript.GetLanguage()
	}
	return nil
}

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
				err := parse(ctx, grammar(j.path, j.lang), j.path, j.src, func(*sitter.Node) error { return nil })
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
