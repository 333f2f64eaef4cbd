package codegraph

import (
	"path"
	"strings"
)

// Resolution for Rust, C and C++ (see NAMING.md): Rust `use` paths map to
// module files through the crate's layout; C and C++ includes to repository
// files, binding what a header defines and, for what it only declares, the
// definition elsewhere (header/source pairs).

// nativeIndex holds the lookups for the three languages, built with the
// other per-language ones (indexModules).
type nativeIndex struct {
	// qualDefs: "<family>:<qualified base name>" → entity ids, repository
	// wide; family "rust" or "c" (C and C++ share one).
	qualDefs map[string][]string
	// cByName: a C/C++ file's base name → its paths, for includes.
	cByName map[string][]string
	// rustRoot: a Rust file → its crate root directory; rustMods:
	// "<root>|<module path>" → file; rustCrates: crate name → roots.
	rustRoot   map[string]string
	rustMods   map[string]string
	rustCrates map[string][]string
	// cHeaders: a C/C++ header → what including it brings in;
	// includes: a file → the headers it includes, in order (resolveCInclude).
	cHeaders map[string]*cHeader
	includes map[string][]string
}

// family groups languages that share names across files.
func family(lang string) string {
	switch lang {
	case "rust":
		return "rust"
	case "c", "cpp":
		return "c"
	}
	return ""
}

func (b *builder) indexNative() {
	x := &b.native
	x.qualDefs, x.cByName = map[string][]string{}, map[string][]string{}
	x.rustRoot, x.rustMods, x.rustCrates = map[string]string{}, map[string]string{}, map[string][]string{}
	x.cHeaders, x.includes = map[string]*cHeader{}, map[string][]string{}
	for _, p := range b.files {
		fam := family(p.lang.Name())
		if fam == "" {
			continue
		}
		for _, d := range p.res.Defs {
			k := fam + ":" + normQual(d.Name)
			x.qualDefs[k] = append(x.qualDefs[k], EntityID(p.path, d.Name))
		}
		if fam == "c" {
			x.cByName[path.Base(p.path)] = append(x.cByName[path.Base(p.path)], p.path)
			continue
		}
		root := b.rustCrateRoot(p.path)
		x.rustRoot[p.path] = root
		x.rustMods[root+"|"+rustModulePath(root, p.path)] = p.path
	}
	for _, root := range uniqueValues(x.rustRoot) {
		dir := root
		if path.Base(dir) == "src" {
			dir = dirOf(dir)
		}
		name := strings.ReplaceAll(path.Base(dir), "-", "_")
		x.rustCrates[name] = append(x.rustCrates[name], root)
	}
}

func uniqueValues(m map[string]string) []string {
	seen := map[string]bool{}
	var out []string
	for _, k := range sortedKeys(m) {
		if v := m[k]; !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// rustCrateRoot is the nearest directory at or above file's that holds a
// lib.rs or main.rs; the file's own directory when none does.
func (b *builder) rustCrateRoot(file string) string {
	for d := dirOf(file); ; d = dirOf(d) {
		for _, r := range []string{"lib.rs", "main.rs"} {
			if _, ok := b.byPath[joinPath(d, r)]; ok {
				return d
			}
		}
		if d == RootID {
			return dirOf(file)
		}
	}
}

func joinPath(dir, name string) string {
	if dir == RootID {
		return name
	}
	return dir + "/" + name
}

// rustModulePath is file's module under its crate root: "a::b" for
// <root>/a/b.rs and <root>/a/b/mod.rs, "" for the root's lib.rs/main.rs.
func rustModulePath(root, file string) string {
	rel := file
	if root != RootID {
		rel = strings.TrimPrefix(file, root+"/")
	}
	rel = strings.TrimSuffix(rel, ".rs")
	switch {
	case rel == "lib" || rel == "main" || rel == "mod":
		return ""
	case strings.HasSuffix(rel, "/mod"):
		rel = strings.TrimSuffix(rel, "/mod")
	}
	return strings.ReplaceAll(rel, "/", "::")
}

// rustModule resolves a `use` path's module part to the file of its
// longest prefix that is a module, and the segments after it (items).
func (b *builder) rustModule(from, mod string) (file string, rest []string) {
	segs := strings.Split(mod, "::")
	root := b.native.rustRoot[from]
	cur := strings.Split(rustModulePath(root, from), "::")
	if cur[0] == "" {
		cur = nil
	}
	var base []string
	switch segs[0] {
	case "crate":
		segs = segs[1:]
	case "self":
		base, segs = cur, segs[1:]
	case "super":
		base = cur
		for len(segs) > 0 && segs[0] == "super" {
			if len(base) > 0 {
				base = base[:len(base)-1]
			}
			segs = segs[1:]
		}
	default:
		// Another crate of the workspace, by its directory's name; a name
		// that is a module of this crate (2015-edition paths) otherwise.
		roots := b.native.rustCrates[segs[0]]
		if len(roots) == 0 {
			for name, rs := range b.native.rustCrates {
				if strings.HasSuffix(segs[0], "_"+name) {
					roots = append(roots, rs...)
				}
			}
		}
		if len(roots) == 1 {
			root, segs = roots[0], segs[1:]
		} else if _, ok := b.native.rustMods[root+"|"+segs[0]]; !ok {
			return "", nil
		}
	}
	full := append(append([]string(nil), base...), segs...)
	for k := len(full); k >= 0; k-- {
		if f, ok := b.native.rustMods[root+"|"+strings.Join(full[:k], "::")]; ok {
			return f, full[k:]
		}
	}
	return "", nil
}

func (b *builder) resolveRustImport(p *parsed, im Import) (targets []string, external bool) {
	f, rest := b.rustModule(p.path, im.Module)
	if f == "" {
		first, _, _ := strings.Cut(im.Module, "::")
		return nil, first != "crate" && first != "self" && first != "super"
	}
	prefix := strings.Join(rest, ".")
	if len(im.Names) == 0 {
		local := im.Alias
		if local == "" {
			local = im.Module[strings.LastIndex(im.Module, "::")+1:]
		}
		ts := []string{f}
		if prefix != "" {
			if ts = b.lookup(f, prefix); len(ts) == 0 {
				ts = []string{f}
			}
		}
		b.bind(p.path, local, ts...)
		return notIn(p.path, ts), false
	}
	for i, n := range im.Names {
		if n == "*" {
			b.bindTopLevel(p.path, f)
			continue
		}
		local := im.Local(i)
		q := n
		if prefix != "" {
			q = prefix + "." + n
		}
		ts := b.lookup(f, q)
		if len(ts) == 0 && prefix == "" {
			// A submodule: use a::{b} where b is a::b's file.
			if sub, ok := b.native.rustMods[b.native.rustRoot[f]+"|"+strings.TrimPrefix(rustModulePath(b.native.rustRoot[f], f)+"::"+n, "::")]; ok {
				ts = []string{sub}
			}
		}
		if len(ts) == 0 {
			ts = b.reexports[f][n] // pub use
		}
		if len(ts) > 0 {
			b.bind(p.path, local, ts...)
			targets = append(targets, ts...)
		}
	}
	if len(targets) == 0 {
		targets = []string{f}
	}
	return notIn(p.path, targets), false
}

// notIn drops from targets the entities of file, which an inline module
// imports from the file around it (`use super::f` in `mod tests`): they
// are bound, but the file contains them and does not import them. The file
// itself stands for them when nothing else is left.
func notIn(file string, targets []string) []string {
	var out []string
	for _, t := range targets {
		if fileOf(t) != file || !strings.Contains(t, ":") {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return []string{file}
	}
	return out
}

// cInclude resolves an #include path to a parsed C/C++ file: next to the
// including file, from the repository's root, then any file whose path
// ends with it (the one sharing the longest directory prefix with from).
func (b *builder) cInclude(from, inc string) string {
	inc = path.Clean(inc)
	for _, cand := range []string{path.Join(path.Dir(from), inc), inc} {
		if q := b.byPath[cand]; q != nil && family(q.lang.Name()) == "c" {
			return cand
		}
	}
	best, bestLen := "", -1
	for _, f := range b.native.cByName[path.Base(inc)] {
		if !strings.HasSuffix(f, "/"+inc) {
			continue
		}
		if n := commonPrefix(f, from); n > bestLen {
			best, bestLen = f, n
		}
	}
	return best
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

func (b *builder) resolveCInclude(p *parsed, im Import) (targets []string, external bool) {
	f := b.cInclude(p.path, im.Module)
	if f == "" {
		return nil, true
	}
	h := b.cHeaderOf(f)
	b.native.includes[p.path] = append(b.native.includes[p.path], f)
	if b.has(f) {
		targets = append(targets, f)
	}
	for _, tf := range h.files {
		if tf != p.path {
			targets = append(targets, tf)
		}
	}
	if len(targets) == 0 {
		return nil, false // a header that defines and declares nothing we parse
	}
	return targets, false
}

// cHeader is what including a C/C++ header brings into a file, made once
// per header however many files include it.
type cHeader struct {
	// names: each name the header defines, bound to its definition, and
	// each it only declares, bound to its definition elsewhere.
	names map[string][]string
	// files: for a header without definitions, the files that define
	// what it declares (first seen first): what the include brings in.
	files []string
}

func (b *builder) cHeaderOf(f string) *cHeader {
	if h := b.native.cHeaders[f]; h != nil {
		return h
	}
	h := &cHeader{names: map[string][]string{}}
	bind := func(name string, targets ...string) {
		if name != "" && len(targets) > 0 {
			h.names[name] = append(h.names[name], targets...)
		}
	}
	for d := range b.defs[f] {
		bind(normQual(d), EntityID(f, d))
	}
	seen := map[string]bool{}
	for _, d := range b.byPath[f].res.Decls {
		ts := b.cDefinition(f, d)
		bind(normQual(d), ts...)
		if !b.has(f) {
			for _, t := range ts {
				if tf := fileOf(t); !seen[tf] {
					seen[tf] = true
					h.files = append(h.files, tf)
				}
			}
		}
	}
	b.native.cHeaders[f] = h
	return h
}

// cDefinition finds the definition of a function header declares: the one
// in a source file of the header's name (x.h → x.c, x.cpp…) when there is
// one, else the repository's only definition of that name.
func (b *builder) cDefinition(header, decl string) []string {
	ids := b.native.qualDefs["c:"+normQual(decl)]
	stem := strings.TrimSuffix(path.Base(header), path.Ext(header))
	var paired, other []string
	for _, id := range ids {
		f := fileOf(id)
		if f == header || b.kinds[id] != TypeFunction {
			continue
		}
		if strings.TrimSuffix(path.Base(f), path.Ext(f)) == stem {
			paired = append(paired, id)
		} else {
			other = append(other, id)
		}
	}
	if len(paired) > 0 {
		return paired
	}
	if len(other) > 0 && sameBase(other) {
		return other
	}
	return nil
}

// sameBase: every id is one definition (overloads of it in one file).
func sameBase(ids []string) bool {
	for _, id := range ids[1:] {
		if fileOf(id) != fileOf(ids[0]) {
			return false
		}
	}
	return true
}

// nativeMember resolves a member name used in a method of a Rust impl or
// an out-of-line C++ method, whose type is defined in another file: the
// type's other methods anywhere in the repository, when that names one
// definition (overloads of it in one file).
func (b *builder) nativeMember(p *parsed, from, member string) []string {
	fam := family(p.lang.Name())
	if fam == "" || from == "" {
		return nil
	}
	for _, q := range p.scopes(from)[1:] {
		ids := b.native.qualDefs[fam+":"+normQual(q+"."+member)]
		if len(ids) > 0 && sameBase(ids) {
			return ids
		}
	}
	return nil
}
