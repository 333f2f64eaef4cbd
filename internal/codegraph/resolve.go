package codegraph

import (
	"cmp"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// builder turns parsed files into nodes and resolved edges.
type builder struct {
	g       *Graph
	files   []*parsed
	workers int // goroutines resolving calls; default 1
	// list holds the nodes as added, and nodes each one's index in it by id.
	list  []Node
	nodes map[string]int32
	// edges as added, duplicates too: finish sorts them and keeps one of each.
	edges []link

	byPath  map[string]*parsed
	defs    map[string]map[string]int32    // file → qualified names (parsed.defIndex)
	kinds   map[string]string              // entity id → kind
	byBase  map[string]map[string][]string // file → qualified base name → ids (overloads)
	pkgDefs map[string]map[string][]string // "go:<dir>" or "java:<package>" → qualified base name → ids
	wild    map[string][]string            // file → pkgDefs keys its wildcard imports open
	goDirs  map[string]string              // Go import path → directory ("" outside the repository)
	simple  map[string][]string            // last name segment → entity ids, repository-wide
	classes map[string][]string            // last segment → class ids, repository-wide
	// uniqueSimple and uniqueClass hold the names of simple and classes
	// that name one entity (indexUnique).
	uniqueSimple, uniqueClass map[string][]string

	pyModules map[string][]string // dotted module → files
	javaFQN   map[string]string   // fully qualified class → entity id
	javaPkg   map[string][]string // package → files
	dirFiles  map[string][]string // directory → parsed files in it
	bindings  map[string]map[string][]string
	bases     map[string][]string            // class id → resolved base class ids
	reexports map[string]map[string][]string // first-pass bindings, for re-exports
	externals map[string]map[string]bool     // file → names bound to modules outside the repository
	native    nativeIndex                    // Rust, C and C++ (resolve_native.go)
	ranks     chan []int32                   // rankNodes' answer, for finish
}

// link is an edge between two nodes by their indexes in builder.list, of
// type edgeTypes[typ]: a quarter of an Edge's memory, and no pointers.
type link struct {
	src, dst int32
	typ      uint8
}

// edgeTypes are the edge types a link's typ indexes, in the order of their
// names (finish orders edges by type).
var edgeTypes = [...]string{EdgeContains, EdgeImports, EdgeInherits, EdgeInvokes}

const (
	linkContains uint8 = iota
	linkImports
	linkInherits
	linkInvokes
)

func newBuilder(g *Graph, files []*parsed) *builder {
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	// Sized once: growing maps of this size cost a third of buildNodes.
	defs := 0
	for _, p := range files {
		defs += len(p.res.Defs)
	}
	return &builder{g: g, files: files, list: make([]Node, 0, defs+2*len(files)), nodes: make(map[string]int32, defs+2*len(files)),
		edges:  make([]link, 0, defs+2*len(files)), // contains edges, before the rest
		byPath: map[string]*parsed{}, defs: map[string]map[string]int32{}, kinds: make(map[string]string, defs),
		byBase: map[string]map[string][]string{}, pkgDefs: map[string]map[string][]string{}, wild: map[string][]string{}, goDirs: map[string]string{}, simple: map[string][]string{}, classes: map[string][]string{},
		pyModules: map[string][]string{}, javaFQN: map[string]string{}, javaPkg: map[string][]string{},
		dirFiles: map[string][]string{}, bindings: map[string]map[string][]string{}, bases: map[string][]string{},
		externals: map[string]map[string]bool{}}
}

// addNode adds n unless a node with its id is there, and returns the index
// of the node with that id.
func (b *builder) addNode(n Node) int32 {
	if i, ok := b.nodes[n.ID]; ok {
		return i
	}
	i := int32(len(b.list))
	b.list = append(b.list, n)
	b.nodes[n.ID] = i
	return i
}

// has reports whether id is a node of the graph.
func (b *builder) has(id string) bool {
	_, ok := b.nodes[id]
	return ok
}

// edge adds an edge of type typ (a link type) from src to dst where one may
// join them: two different nodes of the graph.
func (b *builder) edge(src, dst string, typ uint8) {
	if src == dst {
		return
	}
	s, ok := b.nodes[src]
	if !ok {
		return
	}
	if d, ok := b.nodes[dst]; ok {
		b.edges = append(b.edges, link{s, d, typ})
	}
}

// nodes creates directory, file and entity nodes and the contains hierarchy.
// The name indexes (indexNames) are built beside it on another goroutine:
// the two write different maps, each in file order.
func (b *builder) buildNodes() {
	names := make(chan struct{})
	go func() {
		defer close(names)
		b.indexNames()
	}()
	st := &b.g.Stats
	var at []int32
	for _, p := range b.files {
		st.Files++
		st.Bytes += int64(len(p.src))
		st.FilesByLang[p.lang.Name()]++
		st.ErrorNodes += p.res.ErrorNodes
		if p.res.ErrorNodes > 0 {
			st.FilesWithErr++
		}
		b.byPath[p.path] = p
		b.dirFiles[dirOf(p.path)] = append(b.dirFiles[dirOf(p.path)], p.path)
		if len(p.res.Defs) == 0 {
			continue // a file gets a node only if it defines something
		}
		lang := p.lang.Name() // code and hashes: p.prepare, run by Build's workers
		file := b.addNode(Node{ID: p.path, Type: TypeFile, Language: lang, Path: p.path, StartLine: 1, EndLine: int32(max(p.lines, 1)),
			ContentHash: p.fileHash, Code: p.fileCode})
		// Directories up to the root.
		// A directory seen before has its own edges up to the root.
		child := file
		for d := dirOf(p.path); ; d = dirOf(d) {
			_, seen := b.nodes[d]
			dir := b.addNode(Node{ID: d, Type: TypeDirectory, Path: d})
			b.edges = append(b.edges, link{dir, child, linkContains})
			if seen || d == RootID {
				break
			}
			child = dir
		}
		b.defs[p.path] = p.defIndex
		at = at[:0] // each definition's node
		for i, d := range p.res.Defs {
			id := p.defID[i]
			typ := TypeFunction
			if d.Kind == KindClass {
				typ = TypeClass
			}
			at = append(at, b.addNode(Node{ID: id, Type: typ, Language: lang, Path: p.path, Name: d.Name,
				StartLine: int32(d.StartLine), EndLine: int32(d.EndLine), ContentHash: p.defHash[i], Code: p.defCode[i]}))
			b.kinds[id] = typ
		}
		for i, n := range at {
			parent := file
			if j := p.defParent[i]; j >= 0 {
				parent = at[j]
			}
			b.edges = append(b.edges, link{parent, n, linkContains})
		}
	}
	<-names
	b.indexModules()
}

// indexNames fills byBase, pkgDefs, simple and classes with the files'
// definitions, in file order, then uniqueSimple and uniqueClass.
func (b *builder) indexNames() {
	for _, p := range b.files {
		if len(p.res.Defs) == 0 {
			continue
		}
		// The file's and its package's maps, looked up once: their keys
		// (Java paths and packages) are long to hash for every definition.
		byBase := b.byBase[p.path]
		if byBase == nil {
			byBase = map[string][]string{}
			b.byBase[p.path] = byBase
		}
		var pkgDefs map[string][]string
		if pk := p.pkgKey; pk != "" {
			if pkgDefs = b.pkgDefs[pk]; pkgDefs == nil {
				pkgDefs = map[string][]string{}
				b.pkgDefs[pk] = pkgDefs
			}
		}
		for i, d := range p.res.Defs {
			id, key, last := p.defID[i], p.defKey[i], p.defLast[i]
			byBase[key] = append(byBase[key], id)
			if pkgDefs != nil {
				pkgDefs[key] = append(pkgDefs[key], id)
			}
			b.simple[last] = append(b.simple[last], id)
			if d.Kind == KindClass {
				b.classes[last] = append(b.classes[last], id)
			}
		}
	}
	b.indexUnique()
}

// indexModules prepares the per-language lookups used to resolve imports.
func (b *builder) indexModules() {
	b.indexNative()
	for _, p := range b.files {
		switch p.lang.Name() {
		case "python":
			mod := strings.TrimSuffix(p.path, ".py")
			mod = strings.TrimSuffix(mod, "/__init__")
			segs := strings.Split(mod, "/")
			for i := range segs {
				dotted := strings.Join(segs[i:], ".")
				b.pyModules[dotted] = append(b.pyModules[dotted], p.path)
			}
		case "java":
			pkg := p.res.Package
			b.javaPkg[pkg] = append(b.javaPkg[pkg], p.path)
			for _, d := range p.res.Defs {
				if d.Kind == KindClass && !strings.Contains(d.Name, "$") {
					fqn := d.Name
					if pkg != "" {
						fqn = pkg + "." + d.Name
					}
					b.javaFQN[fqn] = EntityID(p.path, d.Name)
				}
			}
		}
	}
}

// lookup finds entities named qual (qualified, overloads and duplicates
// merged) in file.
func (b *builder) lookup(file, qual string) []string {
	return b.byBase[file][normQual(qual)]
}

// lookupDot is lookup(file, q+"."+name), without building that name when
// it needs no normalising: call resolution asks this for every enclosing
// scope of every call.
func (b *builder) lookupDot(file, q, name string) []string {
	return lookupDotIn(b.byBase[file], q, name)
}

// lookupDotIn is lookupDot in one file's map of byBase, which a caller
// asking about several scopes of one file looks up once.
func lookupDotIn(byBase map[string][]string, q, name string) []string {
	if strings.ContainsAny(q, "(#") || strings.ContainsAny(name, "(#") {
		return byBase[normQual(q+"."+name)]
	}
	var buf [128]byte
	k := append(append(append(buf[:0], q...), '.'), name...)
	return byBase[string(k)]
}

// normQual drops overload signatures and duplicate suffixes from every
// segment of a qualified name.
func normQual(q string) string {
	if !strings.ContainsAny(q, "(#") {
		return q
	}
	parts := splitQual(q)
	for i, s := range parts {
		parts[i] = baseName(s)
	}
	return strings.Join(parts, ".")
}

// packageKey names the package scope a file shares names with: its
// directory in Go, its declared package in Java; "" elsewhere.
func packageKey(p *parsed) string {
	switch p.lang.Name() {
	case "go":
		return "go:" + dirOf(p.path)
	case "java":
		return "java:" + p.res.Package
	}
	return ""
}

// bind records that, in file, name refers to targets (entities or files).
func (b *builder) bind(file, name string, targets ...string) {
	if name == "" || len(targets) == 0 {
		return
	}
	m := b.bindings[file]
	if m == nil {
		m = map[string][]string{}
		b.bindings[file] = m
	}
	m[name] = append(m[name], targets...)
}

// boundIn returns what name refers to in a file, given its bindings and
// includes (fileMaps): what was bound there, then what the headers it
// includes bring in.
func (b *builder) boundIn(bindings map[string][]string, includes []string, name string) []string {
	ts := bindings[name]
	for _, h := range includes {
		if hs := b.native.cHeaders[h].names[name]; len(hs) > 0 {
			ts = append(ts[:len(ts):len(ts)], hs...)
		}
	}
	return ts
}

// bindTopLevel binds, in file, every top-level definition of f by its name
// (a wildcard import).
func (b *builder) bindTopLevel(file, f string) {
	for d := range b.defs[f] {
		if !strings.Contains(d, ".") {
			b.bind(file, d, EntityID(f, d))
		}
	}
}

// resolve adds imports, invokes and inherits edges.
func (b *builder) resolve() {
	st := &b.g.Stats
	// Two passes: the first binds every file's imported names, so that the
	// second can follow re-exports (a package __init__ importing from its
	// modules) whatever the order of files. Only Python, JavaScript,
	// TypeScript and Rust imports read re-exports, and only of files in
	// their own language, so the first pass skips the others.
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			b.reexports, b.bindings, b.externals = b.bindings, map[string]map[string][]string{}, map[string]map[string]bool{}
			b.native.includes = map[string][]string{}
		}
		for _, p := range b.files {
			if pass == 0 && !reexporting[p.lang.Name()] {
				continue
			}
			for _, im := range p.res.Imports {
				targets, external := b.resolveImport(p, im)
				if pass == 0 {
					continue
				}
				switch {
				case len(targets) > 0:
					// A file without definitions has no node and no edges.
					for _, t := range targets {
						b.edge(p.path, t, linkImports)
					}
				case external:
					st.External++
					b.markExternal(p.path, im)
				default:
					st.Unresolved[EdgeImports]++
				}
			}
		}
	}
	// What names resolve through is bound now: each file's maps are
	// looked up once.
	for _, p := range b.files {
		p.maps = b.mapsOf(p)
	}
	for _, p := range b.files {
		for _, in := range p.res.Inherits {
			from := EntityID(p.path, in.Class)
			if !b.has(from) {
				continue
			}
			ts := b.resolveName(p, in.Class, in.Base, true)
			if len(ts) == 0 {
				if b.externals[p.path][firstQual(in.Base)] {
					st.ExternalBases++
				} else {
					st.Unresolved[EdgeInherits]++
				}
			}
			for _, t := range ts {
				if t != from {
					b.edge(from, t, linkInherits)
					b.bases[from] = append(b.bases[from], t)
				}
			}
		}
	}
	// Calls only read what the passes above built, so files are resolved in
	// parallel, each worker keeping its own edges and counts; finish sorts
	// the edges, so the graph is the same whichever worker found them.
	type share struct {
		edges                []link
		external, unresolved int
	}
	shares := make([]share, max(1, b.workers))
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for w := range shares {
		wg.Add(1)
		go func(sh *share) {
			defer wg.Done()
			// What a callee resolves to within a run of one caller's calls:
			// resolveCall depends on the file, the caller and the callee
			// only, and a caller often calls one callee several times.
			type resolved struct {
				ts       []string
				external bool
			}
			memo := map[string]resolved{}
			outside := map[string][]string{} // resolveNameIn's, for one file
			reset := func() {
				if len(memo) > 32 { // clearing costs the map's size: start small again
					memo = map[string]resolved{}
				} else {
					clear(memo)
				}
			}
			for i := int(next.Add(1) - 1); i < len(b.files); i = int(next.Add(1) - 1) {
				p := b.files[i]
				// A file's calls come definition by definition: the
				// caller's id is made once for each run of them.
				lastFrom, from := "", p.path
				src, known := b.nodes[from]
				ext := b.externals[p.path]
				reset()
				if len(outside) > 0 { // a new file's names
					outside = make(map[string][]string, len(outside))
				}
				for _, c := range p.res.Calls {
					if c.From != lastFrom {
						lastFrom, from = c.From, p.path
						if i, ok := p.defIndex[c.From]; ok {
							from = p.defID[i] // the node's own string
						} else if c.From != "" {
							from = EntityID(p.path, c.From)
						}
						src, known = b.nodes[from]
						reset()
					}
					if !known {
						continue
					}
					r, seen := memo[c.Callee]
					if !seen {
						r.ts = b.resolveCall(p, c, outside)
						r.external = len(r.ts) == 0 && ext[firstQual(c.Callee)]
						memo[c.Callee] = r
					}
					if len(r.ts) == 0 {
						if r.external {
							sh.external++
						} else {
							sh.unresolved++
						}
					}
					if seen {
						continue // the caller's edges to these targets are there
					}
					for _, t := range r.ts {
						if t == from {
							continue
						}
						if dst, ok := b.nodes[t]; ok { // from is a node (known)
							sh.edges = append(sh.edges, link{src, dst, linkInvokes})
						}
					}
				}
			}
		}(&shares[w])
	}
	wg.Wait()
	n := 0
	for _, sh := range shares {
		n += len(sh.edges)
	}
	b.edges = slices.Grow(b.edges, n)
	for _, sh := range shares {
		b.edges = append(b.edges, sh.edges...)
		st.ExternalCalls += sh.external
		st.Unresolved[EdgeInvokes] += sh.unresolved
	}
}

// reexporting are the languages whose imports follow the first pass's
// bindings (resolve).
var reexporting = map[string]bool{"python": true, "javascript": true, "typescript": true, "rust": true}

// resolveImport returns the nodes an import names, binding the names it
// introduces. external is true for modules that are not in the repository.
func (b *builder) resolveImport(p *parsed, im Import) (targets []string, external bool) {
	var files []string
	switch p.lang.Name() {
	case "python":
		files = b.pyModuleFiles(p.path, im.Module)
	case "java":
		if fqn, ok := b.javaFQN[im.Module]; ok {
			if len(im.Names) == 0 {
				b.bind(p.path, lastDot(im.Module), fqn)
				return []string{fqn}, false
			}
			for _, n := range im.Names {
				ts := b.lookup(fileOf(fqn), nameOf(fqn)+"."+n)
				b.bind(p.path, n, ts...)
				targets = append(targets, ts...)
			}
			if len(targets) == 0 {
				targets = []string{fqn}
			}
			return targets, false
		}
		if fs := b.javaPkg[im.Module]; len(fs) > 0 && len(im.Names) == 1 && im.Names[0] == "*" {
			b.wild[p.path] = append(b.wild[p.path], "java:"+im.Module)
			return nil, false
		}
		return nil, !strings.HasPrefix(im.Module, p.res.Package)
	case "go":
		dir := b.goDir(im.Module)
		if dir == "" {
			return nil, true
		}
		alias := im.Alias
		if alias == "" {
			alias = path.Base(im.Module)
		}
		b.bind(p.path, alias, b.dirFiles[dir]...)
		return []string{dir}, false
	case "rust":
		return b.resolveRustImport(p, im)
	case "c", "cpp":
		return b.resolveCInclude(p, im)
	case "javascript", "typescript":
		if !strings.HasPrefix(im.Module, ".") && !strings.HasPrefix(im.Module, "/") {
			return nil, true
		}
		if f := b.jsFile(p.path, im.Module); f != "" {
			files = []string{f}
		}
	}
	if len(files) == 0 {
		return nil, p.lang.Name() == "python" && !strings.HasPrefix(im.Module, ".")
	}
	f := files[0]
	if im.Alias != "" {
		b.bind(p.path, im.Alias, f)
	} else if len(im.Names) == 0 {
		b.bind(p.path, im.Module, f)
	}
	for i, n := range im.Names {
		if n == "*" {
			b.bindTopLevel(p.path, f)
			continue
		}
		local := im.Local(i)
		ts := b.lookup(f, n)
		if len(ts) == 0 {
			ts = b.reexports[f][n]
		}
		if len(ts) == 0 && n == "default" {
			// `export default function format` is named format: a default
			// import bound to that name means it.
			ts = b.lookup(f, local)
		}
		if len(ts) == 0 && p.lang.Name() == "python" {
			ts = b.pyModuleFiles(p.path, joinModule(im.Module, n))
		}
		if len(ts) > 0 {
			b.bind(p.path, local, ts...)
			targets = append(targets, ts...)
			continue
		}
		b.bind(p.path, local, f)
	}
	if len(targets) == 0 {
		targets = []string{f}
	}
	return targets, false
}

func joinModule(mod, name string) string {
	if strings.HasSuffix(mod, ".") {
		return mod + name
	}
	return mod + "." + name
}

func lastDot(s string) string {
	if i := strings.LastIndexByte(s, '.'); i >= 0 {
		return s[i+1:]
	}
	return s
}

func fileOf(id string) string { f, _, _ := strings.Cut(id, ":"); return f }
func nameOf(id string) string { _, n, _ := strings.Cut(id, ":"); return n }

// pyModuleFiles resolves a Python module (absolute or relative to from).
func (b *builder) pyModuleFiles(from, mod string) []string {
	if strings.HasPrefix(mod, ".") {
		dots := len(mod) - len(strings.TrimLeft(mod, "."))
		dir := path.Dir(from)
		for i := 1; i < dots; i++ {
			dir = path.Dir(dir)
		}
		rest := strings.ReplaceAll(mod[dots:], ".", "/")
		base := rest
		if dir != "." {
			base = path.Join(dir, rest)
		}
		for _, c := range []string{base + ".py", path.Join(base, "__init__.py")} {
			if _, ok := b.byPath[c]; ok {
				return []string{c}
			}
		}
		return nil
	}
	fs := b.pyModules[mod]
	if len(fs) == 0 {
		return nil
	}
	// Prefer the file whose whole path is the module (from the root).
	want := strings.ReplaceAll(mod, ".", "/")
	for _, f := range fs {
		if f == want+".py" || f == want+"/__init__.py" {
			return []string{f}
		}
	}
	if len(fs) == 1 {
		return fs
	}
	return nil // ambiguous suffix match: do not guess
}

// goDir maps a Go import path onto a directory of the repository: the
// longest directory path that is a suffix of the import path.
func (b *builder) goDir(imp string) string {
	if d, ok := b.goDirs[imp]; ok {
		return d
	}
	best := ""
	for cand := imp; cand != ""; {
		if fs := b.dirFiles[cand]; len(fs) > 0 && b.byPath[fs[0]].lang.Name() == "go" && b.has(cand) {
			best = cand
			break
		}
		k := strings.IndexByte(cand, '/')
		if k < 0 {
			break
		}
		cand = cand[k+1:]
	}
	b.goDirs[imp] = best
	return best
}

// jsFile resolves a relative JS/TS module specifier.
func (b *builder) jsFile(from, spec string) string {
	base := path.Join(path.Dir(from), spec)
	exts := []string{"", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"}
	for _, e := range exts {
		if _, ok := b.byPath[base+e]; ok {
			return base + e
		}
	}
	for _, e := range exts[1:] {
		if _, ok := b.byPath[base+"/index"+e]; ok {
			return base + "/index" + e
		}
	}
	// "./x.js" written for a TypeScript source x.ts.
	if ext := path.Ext(base); ext != "" {
		stem := strings.TrimSuffix(base, ext)
		for _, e := range exts[1:] {
			if _, ok := b.byPath[stem+e]; ok {
				return stem + e
			}
		}
	}
	return ""
}

// enclosing lists the qualified names enclosing def: itself first, its
// first segment last.
func enclosing(def string) []string {
	// splitQual's parts are separated by single dots, so each prefix of
	// parts joined is a prefix of def.
	var buf [8]string
	parts := appendQual(buf[:0], def)
	out := make([]string, len(parts))
	end := len(def)
	for k := len(parts) - 1; k >= 0; k-- {
		out[len(parts)-1-k] = def[:end]
		end -= len(parts[k]) + 1
	}
	return out
}

// scopes is enclosing(from), kept for the next name resolved in the same
// definition of p: a file's calls come definition by definition, and one
// goroutine at a time resolves a file. The slice must not be changed.
func (p *parsed) scopes(from string) []string {
	if p.scopesOf != from || p.scopesCache == nil {
		p.scopesOf, p.scopesCache = from, enclosing(from)
		p.scopesNorm = p.scopesNorm[:0]
		for _, q := range p.scopesCache {
			nq := ""
			if joinsAtDot(q) {
				nq = normQual(q)
			}
			p.scopesNorm = append(p.scopesNorm, nq)
		}
	}
	return p.scopesCache
}

// lookupScope is lookupDotIn(byBase, q, name) for the i-th of the scopes
// last asked for, whose normalised name is kept (scopesNorm): a Java
// method's scope carries its signature, which lookupDotIn normalises for
// every name looked up in it.
func (p *parsed) lookupScope(byBase map[string][]string, i int, name string) []string {
	nq := p.scopesNorm[i]
	if nq == "" {
		return lookupDotIn(byBase, p.scopesCache[i], name)
	}
	if strings.ContainsAny(name, "(#") {
		name = normQual(name)
	}
	var buf [128]byte
	k := append(append(append(buf[:0], nq...), '.'), name...)
	return byBase[string(k)]
}

// joinsAtDot reports whether q+"."+name splits (appendQual) into q's parts
// and name's, whatever name is (q's brackets close by its end), so that
// normQual(q+"."+name) is normQual(q)+"."+normQual(name).
func joinsAtDot(q string) bool {
	var buf [8]string
	parts := appendQual(buf[:0], q+".\x00")
	return parts[len(parts)-1] == "\x00"
}

// enclosingClass is the innermost class (or the definition's own class) around def.
func (b *builder) enclosingClass(file, def string) string {
	for _, q := range enclosing(def) {
		if b.kinds[EntityID(file, q)] == TypeClass {
			return q
		}
	}
	return ""
}

// selfNames name the receiver: Python's self and cls, Java's, JS's and
// C++'s this, Rust's self and Self.
var selfNames = map[string]bool{"self": true, "this": true, "cls": true, "Self": true}

// resolveCall applies the scope preference: same class, enclosing scopes and
// the same file, imported names, the same package, then a repository-wide
// unique name. outside is resolveNameIn's, for p's calls.
func (b *builder) resolveCall(p *parsed, c Call, outside map[string][]string) []string {
	var buf [8]string
	parts := appendQual(buf[:0], c.Callee)
	if len(parts) == 0 || parts[0] == "" {
		return nil
	}
	if len(parts) >= 2 && (selfNames[parts[0]] || parts[0] == "super") {
		if cls := b.enclosingClass(p.path, c.From); cls != "" {
			rest := strings.Join(parts[1:], ".")
			if parts[0] != "super" {
				if ts := b.lookup(p.path, cls+"."+rest); len(ts) > 0 {
					return ts
				}
			}
			if ts := b.inBases(EntityID(p.path, cls), rest, 0); len(ts) > 0 {
				return ts
			}
		}
		if parts[0] != "super" {
			// A Rust impl or an out-of-line C++ method of a type defined
			// elsewhere: the type's methods, by the caller's own prefix.
			if ts := b.nativeMember(p, c.From, strings.Join(parts[1:], ".")); len(ts) > 0 {
				return ts
			}
		}
		return b.unique(parts[len(parts)-1], false)
	}
	return b.resolveNameIn(p, c.From, c.Callee, false, outside)
}

// resolveName resolves a (possibly dotted) name used inside from.
func (b *builder) resolveName(p *parsed, from, name string, classesOnly bool) []string {
	return b.resolveNameIn(p, from, name, classesOnly, nil)
}

// resolveNameIn is resolveName, keeping in outside (when not nil) what
// it finds past from's scopes for the next name used in the same file:
// that does not depend on from where the language is not C, C++ or Rust
// (their unqualified names also look in from's namespace or type).
func (b *builder) resolveNameIn(p *parsed, from, name string, classesOnly bool, outside map[string][]string) []string {
	// Enclosing scopes, innermost first, then the file's top level.
	if from != "" {
		local := b.mapsOf(p).local
		for i := range p.scopes(from) {
			if ts := b.keep(p.lookupScope(local, i, name), classesOnly); len(ts) > 0 {
				return ts
			}
		}
	}
	if outside == nil || classesOnly || family(p.lang.Name()) != "" {
		return b.resolveOutside(p, from, name, classesOnly)
	}
	ts, ok := outside[name]
	if !ok {
		ts = b.resolveOutside(p, from, name, classesOnly)
		outside[name] = ts
	}
	return ts
}

// keep is ts, only its classes when classesOnly.
func (b *builder) keep(ts []string, classesOnly bool) []string {
	if !classesOnly {
		return ts
	}
	var out []string
	for _, t := range ts {
		if b.kinds[t] == TypeClass {
			out = append(out, t)
		}
	}
	return out
}

// fileMaps are the maps name resolution reads for one file: their keys
// (paths, packages) are long to hash for every name resolved.
type fileMaps struct {
	local    map[string][]string // byBase[path]
	bindings map[string][]string // bindings[path]
	includes []string            // native.includes[path]
	wild     []string            // wild[path]
	pkg      map[string][]string // pkgDefs[pkgKey]
}

// mapsOf looks p's fileMaps up; resolve keeps them in p.maps once the
// imports are bound.
func (b *builder) mapsOf(p *parsed) *fileMaps {
	if p.maps != nil {
		return p.maps
	}
	m := &fileMaps{local: b.byBase[p.path], bindings: b.bindings[p.path], includes: b.native.includes[p.path], wild: b.wild[p.path]}
	if p.pkgKey != "" {
		m.pkg = b.pkgDefs[p.pkgKey]
	}
	return m
}

// resolveOutside is resolveName past from's own scopes: the file's top
// level, its imports, the same package, then a repository-wide name.
func (b *builder) resolveOutside(p *parsed, from, name string, classesOnly bool) []string {
	var buf [8]string
	parts := appendQual(buf[:0], name)
	keep := func(ts []string) []string { return b.keep(ts, classesOnly) }
	m := b.mapsOf(p)
	if ts := keep(m.local[normQual(name)]); len(ts) > 0 {
		return ts
	}
	// Imported names and modules: the longest bound prefix. parts are
	// name's segments between single dots, so the first k of them are
	// name up to end.
	end := len(name)
	for k := len(parts); k > 0; k-- {
		if k < len(parts) {
			end -= len(parts[k]) + 1
		}
		targets := b.boundIn(m.bindings, m.includes, name[:end])
		if len(targets) == 0 {
			continue
		}
		var rest string
		if k < len(parts) {
			rest = name[end+1:]
		}
		var out []string
		for _, t := range targets {
			if rest == "" {
				out = append(out, t)
				continue
			}
			if strings.Contains(t, ":") {
				out = append(out, b.lookupDot(fileOf(t), nameOf(t), rest)...)
			} else {
				out = append(out, b.lookup(t, rest)...)
			}
		}
		if out = keep(out); len(out) > 0 {
			return out
		}
	}
	if family(p.lang.Name()) != "" && from != "" {
		// Names a C++ include or a Rust use bound with their namespace or
		// type, used unqualified inside it; then the caller's type's other
		// methods (implicit this in C++, Self:: in Rust).
		for _, q := range p.scopes(from)[1:] {
			if ts := keep(b.boundIn(m.bindings, m.includes, normQual(q+"."+name))); len(ts) > 0 {
				return ts
			}
		}
		if ts := keep(b.nativeMember(p, from, name)); len(ts) > 0 {
			return ts
		}
	}
	// The same package (Go directory, Java package), then packages opened by
	// wildcard imports.
	nq := normQual(name)
	if p.pkgKey != "" {
		if ts := keep(m.pkg[nq]); len(ts) > 0 {
			return ts
		}
	}
	for _, k := range m.wild {
		if ts := keep(b.pkgDefs[k][nq]); len(ts) > 0 {
			return ts
		}
	}
	return b.unique(baseName(parts[len(parts)-1]), classesOnly)
}

// unique returns the one entity with that simple name in the repository.
func (b *builder) unique(name string, classesOnly bool) []string {
	if classesOnly {
		return b.uniqueClass[name]
	}
	return b.uniqueSimple[name]
}

// indexUnique fills uniqueSimple and uniqueClass from simple and classes:
// the names that one entity has, overloads of one method counting as one.
func (b *builder) indexUnique() {
	one := func(by map[string][]string) map[string][]string {
		out := make(map[string][]string, len(by))
	names:
		for name, ids := range by {
			first := ids[0]
			for _, id := range ids[1:] {
				if fileOf(id) != fileOf(first) || strings.Join(baseParts(nameOf(id)), ".") != strings.Join(baseParts(nameOf(first)), ".") {
					continue names
				}
			}
			out[name] = ids
		}
		return out
	}
	b.uniqueSimple, b.uniqueClass = one(b.simple), one(b.classes)
}

func baseParts(q string) []string {
	parts := splitQual(q)
	for i, s := range parts {
		parts[i] = baseName(s)
	}
	return parts
}

// inBases looks for member in the classes cls inherits from (resolved edges).
func (b *builder) inBases(cls, member string, depth int) []string {
	if depth > 8 {
		return nil
	}
	for _, base := range b.bases[cls] {
		if ts := b.lookup(fileOf(base), nameOf(base)+"."+member); len(ts) > 0 {
			return ts
		}
		if ts := b.inBases(base, member, depth+1); len(ts) > 0 {
			return ts
		}
	}
	return nil
}

// finish writes nodes and edges into the graph in a stable order.
func (b *builder) finish() {
	// Edges are ordered by source, type and target. Every end is a node,
	// so each is ranked by its place among the sorted node ids, and an
	// edge is keyed by one number: its source's rank, its type (edgeTypes
	// are in the order of their names) and its target's rank.
	rank := <-b.ranks
	keys := make([]uint64, len(b.edges))
	// One run of the edges per worker, keyed and sorted there, then the
	// runs merged: equal keys are equal edges, so the order is the same
	// however the runs fall.
	runs := max(1, min(b.workers, len(b.edges)/4096))
	bounds := make([]int, runs+1)
	for r := range bounds {
		bounds[r] = r * len(b.edges) / runs
	}
	var wg sync.WaitGroup
	for r := range runs {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for i, e := range b.edges[lo:hi] {
				keys[lo+i] = edgeKey(rank[e.src], e.typ, rank[e.dst])
			}
			slices.Sort(keys[lo:hi])
		}(bounds[r], bounds[r+1])
	}
	wg.Wait()
	keys = mergeRuns(keys, bounds, cmp.Compare[uint64])
	b.g.Edges = make([]Edge, 0, len(keys))
	for k, key := range keys {
		if k > 0 && key == keys[k-1] {
			continue
		}
		src, typ, dst := splitEdgeKey(key)
		t := edgeTypes[typ]
		b.g.Edges = append(b.g.Edges, Edge{Src: b.g.Nodes[src].ID, Dst: b.g.Nodes[dst].ID, Type: t})
		b.g.Stats.Edges[t]++
	}
	b.edges, b.list = nil, nil
	b.g.Stats.Nodes = len(b.g.Nodes)
}

// edgeKey orders edges by source rank, type and target rank (each rank
// below 2^31, as an int32's, and a type below 4).
func edgeKey(src int32, typ uint8, dst int32) uint64 {
	return uint64(src)<<33 | uint64(typ)<<31 | uint64(dst)
}

// splitEdgeKey is edgeKey's inverse.
func splitEdgeKey(k uint64) (src int32, typ uint8, dst int32) {
	return int32(k >> 33), uint8(k>>31) & 3, int32(k & (1<<31 - 1))
}

// mergeRuns merges the sorted runs of s, run r being s[bounds[r]:bounds[r+1]],
// into one sorted slice (s or another of its length).
func mergeRuns[T any](s []T, bounds []int, compare func(x, y T) int) []T {
	if len(bounds) <= 2 {
		return s
	}
	buf := make([]T, len(s))
	for len(bounds) > 2 {
		runs := len(bounds) - 1
		next := make([]int, 0, runs/2+2)
		for r := 0; r < runs; r += 2 {
			lo := bounds[r]
			next = append(next, lo)
			if r+1 == runs { // the odd run out
				copy(buf[lo:bounds[r+1]], s[lo:bounds[r+1]])
				continue
			}
			mid, hi := bounds[r+1], bounds[r+2]
			i, j, o := lo, mid, lo
			for i < mid && j < hi {
				if compare(s[j], s[i]) < 0 {
					buf[o], j = s[j], j+1
				} else {
					buf[o], i = s[i], i+1
				}
				o++
			}
			o += copy(buf[o:], s[i:mid])
			copy(buf[o:], s[j:hi])
		}
		bounds = append(next, len(s))
		s, buf = buf, s
	}
	return s
}

// rankNodes sorts the nodes into the graph and ranks their ids, on its
// own goroutine: nothing adds or changes a node after buildNodes, so this
// runs beside resolve, and finish waits for it.
func (b *builder) rankNodes() {
	b.ranks = make(chan []int32, 1)
	go func() {
		type byID struct {
			id string
			i  int32
		}
		ids := make([]byID, len(b.list))
		for i, n := range b.list {
			ids[i] = byID{n.ID, int32(i)}
		}
		slices.SortFunc(ids, func(x, y byID) int { return strings.Compare(x.id, y.id) })
		rank := make([]int32, len(ids))
		b.g.Nodes = make([]Node, len(ids))
		for r, n := range ids {
			rank[n.i] = int32(r)
			b.g.Nodes[r] = b.list[n.i]
		}
		b.ranks <- rank
	}()
}

// lineBounds widens [start, end) to whole lines (without the last
// newline), so a node's code is exactly the source lines
// StartLine..EndLine, indentation included.
func lineBounds(src []byte, start, end int) (int, int) {
	if end > start && src[end-1] == '\n' {
		end-- // a span that ends with its newline ends on that line
	}
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	for end < len(src) && src[end] != '\n' {
		end++
	}
	return start, end
}

// markExternal remembers the names an external import binds in file, so calls
// through them count as external rather than unresolved.
func (b *builder) markExternal(file string, im Import) {
	m := b.externals[file]
	if m == nil {
		m = map[string]bool{}
		b.externals[file] = m
	}
	switch {
	case im.Alias != "":
		m[im.Alias] = true
	case len(im.Names) > 0:
		for _, n := range im.Names {
			m[n] = true
		}
	default:
		m[firstQual(im.Module)] = true // python "os.path" binds os
		m[path.Base(im.Module)] = true // go "net/http" binds http
		m[lastDot(im.Module)] = true   // java "java.util.List" binds List
	}
}
