package extract

/*
#include <stdint.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

// Declarations matching tree-sitter's api.h as vendored by
// github.com/smacker/go-tree-sitter (the pinned version); the symbols are
// defined in that package's C code, which the Go build links in.
typedef struct TSLanguage TSLanguage;
typedef struct TSParser TSParser;
typedef struct TSTree TSTree;
typedef uint16_t TSSymbol;
typedef uint16_t TSFieldId;
typedef struct { uint32_t row; uint32_t column; } TSPoint;
typedef struct { uint32_t context[4]; const void *id; const TSTree *tree; } TSNode;

typedef struct {
	uint32_t start_byte, old_end_byte, new_end_byte;
	TSPoint start_point, old_end_point, new_end_point;
} TSInputEdit;

TSParser *ts_parser_new(void);
TSTree *ts_tree_copy(const TSTree *);
void ts_tree_edit(TSTree *, const TSInputEdit *);
void ts_parser_delete(TSParser *);
bool ts_parser_set_language(TSParser *, const TSLanguage *);
TSTree *ts_parser_parse_string(TSParser *, const TSTree *, const char *, uint32_t);
void ts_parser_set_timeout_micros(TSParser *, uint64_t);
void ts_tree_delete(TSTree *);
TSNode ts_tree_root_node(const TSTree *);
uint32_t ts_node_descendant_count(TSNode);
const TSLanguage *ts_tree_language(const TSTree *);
TSSymbol ts_node_symbol(TSNode);
bool ts_node_is_missing(TSNode);
bool ts_node_has_error(TSNode);
uint32_t ts_node_start_byte(TSNode);
uint32_t ts_node_end_byte(TSNode);
TSPoint ts_node_start_point(TSNode);
TSPoint ts_node_end_point(TSNode);
typedef enum { TSSymbolTypeRegular, TSSymbolTypeAnonymous, TSSymbolTypeAuxiliary } TSSymbolType;
TSSymbolType ts_language_symbol_type(const TSLanguage *, TSSymbol);
uint32_t ts_language_symbol_count(const TSLanguage *);
const char *ts_language_symbol_name(const TSLanguage *, TSSymbol);
uint32_t ts_language_field_count(const TSLanguage *);
const char *ts_language_field_name_for_id(const TSLanguage *, TSFieldId);

typedef struct {
	uint32_t start_byte, end_byte, start_row, end_row;
	int32_t parent, first_child, next_sibling;
	uint32_t child_count;
	uint16_t symbol, field;
	uint8_t flags; // 1 named, 2 missing, 4 error, 8 has_error
} flat_node;

enum { FLAT_NAMED = 1, FLAT_MISSING = 2, FLAT_ERROR = 4, FLAT_HAS_ERROR = 8 };

// flat_parse parses src (not kept) into a tree, or returns NULL with *rc 1
// when the grammar does not load and 2 when parsing gives up (timeout_us
// passed; 0 is no limit).
static TSTree *flat_parse(const TSLanguage *lang, const char *src, uint32_t len, uint64_t timeout_us, int *rc) {
	TSParser *p = ts_parser_new();
	if (!ts_parser_set_language(p, lang)) { ts_parser_delete(p); *rc = 1; return NULL; }
	ts_parser_set_timeout_micros(p, timeout_us);
	TSTree *tree = ts_parser_parse_string(p, NULL, src, len);
	ts_parser_delete(p);
	if (!tree) *rc = 2;
	return tree;
}

// flat_reparse parses src as an edit of old's text (edits, n of them, turn
// that text into src), reusing what the edits leave of old (not changed);
// returns and *rc as flat_parse.
static TSTree *flat_reparse(const TSLanguage *lang, const TSTree *old, const TSInputEdit *edits, int n, const char *src, uint32_t len, uint64_t timeout_us, int *rc) {
	TSTree *base = ts_tree_copy(old);
	for (int i = 0; i < n; i++) ts_tree_edit(base, &edits[i]);
	TSParser *p = ts_parser_new();
	if (!ts_parser_set_language(p, lang)) { ts_parser_delete(p); ts_tree_delete(base); *rc = 1; return NULL; }
	ts_parser_set_timeout_micros(p, timeout_us);
	TSTree *tree = ts_parser_parse_string(p, base, src, len);
	ts_parser_delete(p);
	ts_tree_delete(base);
	if (!tree) *rc = 2;
	return tree;
}

// flat_count is the number of nodes flat_fill writes.
static int64_t flat_count(const TSTree *tree) {
	return ts_node_descendant_count(ts_tree_root_node(tree));
}

// flat_fill reads tree-sitter's trees directly rather than through its
// public cursor, which costs four times as much: a cursor rebuilds its
// place among the siblings at every step and looks a node's field up
// through its ancestors. The fl_ types mirror the layout of the pinned
// runtime's internal headers (subtree.h and length.h, and parser.h's
// TSLanguage up to its alias sequences, which is the grammar ABI of
// versions 13 and 14, all the runtime loads); TestFlatTreeMatchesBindings
// checks the walk against the bindings' own nodes in every language.
typedef struct { uint32_t bytes; TSPoint extent; } fl_length;
typedef struct {
	bool is_inline : 1; bool visible : 1; bool named : 1; bool extra : 1;
	bool has_changes : 1; bool is_missing : 1; bool is_keyword : 1;
	uint8_t symbol;
	uint16_t parse_state;
	uint8_t padding_columns;
	uint8_t padding_rows : 4;
	uint8_t lookahead_bytes : 4;
	uint8_t padding_bytes;
	uint8_t size_bytes;
} fl_inline;
typedef struct {
	volatile uint32_t ref_count;
	fl_length padding, size;
	uint32_t lookahead_bytes, error_cost, child_count;
	TSSymbol symbol;
	uint16_t parse_state;
	bool visible : 1; bool named : 1; bool extra : 1; bool fragile_left : 1; bool fragile_right : 1;
	bool has_changes : 1; bool has_external_tokens : 1; bool has_external_scanner_state_change : 1;
	bool depends_on_column : 1; bool is_missing : 1; bool is_keyword : 1;
	union {
		struct {
			uint32_t visible_child_count, named_child_count, visible_descendant_count;
			int32_t dynamic_precedence;
			uint16_t repeat_depth, production_id;
			struct { TSSymbol symbol; uint16_t parse_state; } first_leaf;
		};
		struct { union { char *long_data; char short_data[24]; }; uint32_t length; } external_scanner_state;
		int32_t lookahead_char;
	};
} fl_heap;
typedef union { fl_inline data; const fl_heap *ptr; } fl_subtree;
typedef struct { TSFieldId field_id; uint8_t child_index; bool inherited; } fl_field_entry;
typedef struct { uint16_t index; uint16_t length; } fl_field_slice;
typedef struct {
	uint32_t version, symbol_count, alias_count, token_count, external_token_count,
		state_count, large_state_count, production_id_count, field_count;
	uint16_t max_alias_sequence_length;
	const uint16_t *parse_table, *small_parse_table;
	const uint32_t *small_parse_table_map;
	const void *parse_actions;
	const char * const *symbol_names, * const *field_names;
	const fl_field_slice *field_map_slices;
	const fl_field_entry *field_map_entries;
	const void *symbol_metadata;
	const TSSymbol *public_symbol_map;
	const uint16_t *alias_map;
	const TSSymbol *alias_sequences;
} fl_language;

#define FL_GET(s, f) ((s).data.is_inline ? (s).data.f : (s).ptr->f)

static inline fl_length fl_add(fl_length a, fl_length b) {
	fl_length r;
	r.bytes = a.bytes + b.bytes;
	if (b.extent.row > 0) { r.extent.row = a.extent.row + b.extent.row; r.extent.column = b.extent.column; }
	else { r.extent.row = a.extent.row; r.extent.column = a.extent.column + b.extent.column; }
	return r;
}
static inline fl_length fl_padding(fl_subtree s) {
	if (s.data.is_inline) { fl_length r = {s.data.padding_bytes, {s.data.padding_rows, s.data.padding_columns}}; return r; }
	return s.ptr->padding;
}
static inline fl_length fl_size(fl_subtree s) {
	if (s.data.is_inline) { fl_length r = {s.data.size_bytes, {0, s.data.size_bytes}}; return r; }
	return s.ptr->size;
}
static inline uint32_t fl_child_count(fl_subtree s) { return s.data.is_inline ? 0 : s.ptr->child_count; }

// A subtree whose children are being written: hidden ones (tree-sitter's
// repetitions and hidden rules) are walked through, their children written
// under the nearest visible ancestor.
typedef struct {
	const fl_subtree *kids;
	uint32_t next, count, sci; // next child, its structural index
	fl_length pos;             // next child's start
	int32_t vparent;           // the nearest visible ancestor's index
	int32_t owner;             // frame of vparent, whose last is its last child written
	int32_t last;
	// A visible node's frame: its children and named children listed so
	// far, and how many tree-sitter counted (visible_child_count and
	// named_child_count, which count through hidden subtrees as the walk
	// does).
	uint32_t nk, nn, kres, nres;
	uint16_t inh;              // a hidden subtree's own field, which its children get when they have none
	const TSSymbol *aliases;
	const fl_field_entry *fields, *fields_end;
} fl_frame;

static inline void fl_frame_init(fl_frame *f, const fl_language *L, fl_subtree s, fl_length pos, int32_t vparent, int32_t owner, uint16_t inh) {
	f->count = s.ptr->child_count;
	f->kids = (const fl_subtree *)s.ptr - f->count;
	f->next = 0; f->sci = 0; f->pos = pos;
	f->vparent = vparent; f->owner = owner; f->last = -1; f->inh = inh;
	f->nk = f->nn = 0;
	f->kres = s.ptr->visible_child_count; f->nres = s.ptr->named_child_count;
	uint16_t prod = s.ptr->production_id;
	f->aliases = prod ? &L->alias_sequences[prod * L->max_alias_sequence_length] : NULL;
	f->fields = f->fields_end = NULL;
	if (L->field_count > 0) {
		fl_field_slice sl = L->field_map_slices[prod];
		f->fields = &L->field_map_entries[sl.index];
		f->fields_end = f->fields + sl.length;
	}
}

// fl_grow doubles a frame stack of *cap frames, or frees it and returns
// NULL when there is no memory for that.
static fl_frame *fl_grow(fl_frame *st, int32_t *cap) {
	fl_frame *g = realloc(st, 2 * (size_t)*cap * sizeof(fl_frame));
	if (!g) { free(st); return NULL; }
	*cap *= 2;
	return g;
}

// flat_fill writes every visible node of the tree in preorder into a (room
// for cap nodes), as tree-sitter's cursor visits them, and returns how many
// it wrote, or -1 when they do not fit. Hidden subtrees (repetitions,
// hidden rules) are walked through: their children go under the nearest
// visible ancestor, and take the hidden subtree's field when they have
// none of their own. named (nsym of them) marks the grammar's named public
// symbols; ERROR is named too.
//
// It also lists each node's children, in order, in kids (room for cap),
// from kstart[i] to kstart[i+1], and its named children in nlist from
// nstart[i] (both starts with room for cap+1), where tree-sitter's counts
// of them agree with the walk: *lists is 1 then, else 0 and the lists are
// not to be read.
static int64_t flat_fill(const TSTree *tree, flat_node *a, int64_t cap, const uint8_t *named, uint32_t nsym,
		int32_t *kids, int32_t *nlist, int32_t *kstart, int32_t *nstart, int *lists) {
	const fl_language *L = (const fl_language *)ts_tree_language(tree);
	if (cap < 1) return -1;
	TSNode root = ts_tree_root_node(tree);
	{
		flat_node *f = &a[0];
		f->start_byte = ts_node_start_byte(root);
		f->end_byte = ts_node_end_byte(root);
		f->start_row = ts_node_start_point(root).row;
		f->end_row = ts_node_end_point(root).row;
		TSSymbol sym = ts_node_symbol(root);
		f->symbol = sym;
		f->field = 0;
		bool err = sym == (TSSymbol)-1;
		bool isnamed = err || (sym < nsym && named[sym]);
		f->flags = (isnamed ? FLAT_NAMED : 0) | (ts_node_is_missing(root) ? FLAT_MISSING : 0) |
			(err ? FLAT_ERROR : 0) | (ts_node_has_error(root) ? FLAT_HAS_ERROR : 0);
		f->parent = -1; f->first_child = -1; f->next_sibling = -1; f->child_count = 0;
	}
	int64_t cnt = 1;
	fl_subtree rs = *(const fl_subtree *)root.id;
	kstart[0] = 0; nstart[0] = 0;
	*lists = 1;
	if (fl_child_count(rs) == 0) { kstart[1] = 0; nstart[1] = 0; return cnt; }
	int64_t kcur = rs.ptr->visible_child_count, ncur = rs.ptr->named_child_count;
	if (kcur > cap || ncur > cap) *lists = 0;
	int32_t scap = 64, depth = 0;
	fl_frame *st = malloc(scap * sizeof(fl_frame));
	if (!st) return -1;
	fl_length rpos = {ts_node_start_byte(root), ts_node_start_point(root)};
	fl_frame_init(&st[depth++], L, rs, rpos, 0, 0, 0);
	while (depth > 0) {
		fl_frame *fr = &st[depth-1];
		if (fr->next == fr->count) {
			if (fr->owner == depth-1 && (fr->nk != fr->kres || fr->nn != fr->nres)) *lists = 0;
			depth--;
			continue;
		}
		fl_subtree ch = fr->kids[fr->next];
		fl_length pos = fr->pos, size = fl_size(ch);
		fr->next++;
		fr->pos = fl_add(pos, size);
		if (fr->next < fr->count) fr->pos = fl_add(fr->pos, fl_padding(fr->kids[fr->next]));
		bool extra = FL_GET(ch, extra);
		TSSymbol alias = 0;
		uint16_t field = 0;
		if (!extra) {
			uint32_t sci = fr->sci++;
			if (fr->aliases) alias = fr->aliases[sci];
			for (const fl_field_entry *e = fr->fields; e < fr->fields_end; e++) {
				if (!e->inherited && e->child_index == sci) { field = e->field_id; break; }
			}
			if (!field) field = fr->inh;
		}
		uint32_t nkids = fl_child_count(ch);
		if (!(FL_GET(ch, visible) || alias)) {
			if (nkids) {
				if (depth == scap && !(st = fl_grow(st, &scap))) return -1;
				fr = &st[depth-1];
				fl_frame_init(&st[depth], L, ch, pos, fr->vparent, fr->owner, field);
				depth++;
			}
			continue;
		}
		if (cnt == cap) { free(st); return -1; }
		flat_node *f = &a[cnt];
		f->start_byte = pos.bytes;
		f->end_byte = pos.bytes + size.bytes;
		f->start_row = pos.extent.row;
		f->end_row = pos.extent.row + size.extent.row;
		TSSymbol sym = alias ? alias : FL_GET(ch, symbol);
		if (sym != (TSSymbol)-1) sym = L->public_symbol_map[sym];
		f->symbol = sym;
		f->field = field;
		bool err = sym == (TSSymbol)-1;
		bool missing = FL_GET(ch, is_missing);
		bool haserr = missing || (!ch.data.is_inline && ch.ptr->error_cost > 0);
		bool isnamed = err || (sym < nsym && named[sym]);
		f->flags = (isnamed ? FLAT_NAMED : 0) | (missing ? FLAT_MISSING : 0) | (err ? FLAT_ERROR : 0) | (haserr ? FLAT_HAS_ERROR : 0);
		f->first_child = -1; f->next_sibling = -1; f->child_count = 0;
		int32_t par = fr->vparent;
		f->parent = par;
		fl_frame *own = &st[fr->owner];
		if (own->last >= 0) a[own->last].next_sibling = (int32_t)cnt; else a[par].first_child = (int32_t)cnt;
		own->last = (int32_t)cnt;
		a[par].child_count++;
		if (*lists) {
			if (own->nk < own->kres) kids[kstart[par] + own->nk++] = (int32_t)cnt; else *lists = 0;
			if (isnamed) {
				if (own->nn < own->nres) nlist[nstart[par] + own->nn++] = (int32_t)cnt; else *lists = 0;
			}
			kstart[cnt] = (int32_t)kcur; nstart[cnt] = (int32_t)ncur;
			if (nkids) {
				kcur += ch.ptr->visible_child_count; ncur += ch.ptr->named_child_count;
				if (kcur > cap || ncur > cap) *lists = 0;
			}
		}
		int32_t self = (int32_t)cnt++;
		if (nkids) {
			if (depth == scap && !(st = fl_grow(st, &scap))) return -1;
			fl_frame_init(&st[depth], L, ch, pos, self, depth, 0);
			depth++;
		}
	}
	free(st);
	if (*lists) {
		if (kcur != cnt - 1) *lists = 0;
		else { kstart[cnt] = (int32_t)kcur; nstart[cnt] = (int32_t)ncur; }
	}
	return cnt;
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"sync"
	"time"
	"unsafe"

	sitter "github.com/smacker/go-tree-sitter"
	tsc "github.com/smacker/go-tree-sitter/c"
)

// flatTree is a whole syntax tree copied out of tree-sitter in one call:
// walking it costs no cgo calls, which is most of what walking the C tree
// node by node costs.
type flatTree struct {
	nodes []flatNode
	src   []byte
	// stable is src as a string where the caller vouched that its bytes
	// never change (WithStableSource): textOf then slices it.
	stable string
	names  *symbolNames
	// children, in order, per node: kids[kidStart[i]:kidStart[i+1]]
	kids, named          []int32
	kidStart, namedStart []int32
	// fnodes holds each node's *fnode once it is asked for (node), so
	// that walking a tree allocates nothing per node.
	fnodes []fnode
	// ctree is tree-sitter's tree, kept for reparseFlat until release or
	// dropCTree.
	ctree *C.TSTree
	// filled: flat_fill listed the children (else index did).
	filled bool
}

// flatPool keeps flatTrees' arrays for the next parse: a file's arrays are
// as large as its nodes, and allocating and clearing them for every file
// cost a tenth of a graph build (jackson-core). A tree goes back once the
// callback it was handed to returns (parseTree); nothing keeps its nodes.
var flatPool sync.Pool

// grow returns s with length n, reusing its array when it is large enough,
// else in a new one of twice that: a pooled tree then grows a few times
// over a build, not at every larger file, and each array it leaves behind
// is memory the build touched once (page faults); the new one's unused
// half, fresh from the system, is not touched. jq's build: 550 fewer page
// faults, and 4 ms of its 113 (docs/changelog.md, 2026-11-29).
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n, 2*n)
}

// dropCTree frees tree-sitter's tree early: t can then no longer be the
// base of reparseFlat, which parses afresh instead.
func (t *flatTree) dropCTree() {
	if t.ctree != nil {
		C.ts_tree_delete(t.ctree)
		t.ctree = nil
	}
}

// release hands t's arrays back to flatPool; t must not be used after.
func (t *flatTree) release() {
	t.dropCTree()
	clear(t.fnodes) // they point at t
	*t = flatTree{nodes: t.nodes[:0], kids: t.kids[:0], named: t.named[:0],
		kidStart: t.kidStart[:0], namedStart: t.namedStart[:0], fnodes: t.fnodes[:0]}
	flatPool.Put(t)
}

type flatNode struct {
	startByte, endByte, startRow, endRow uint32
	parent, firstChild, nextSibling      int32
	childCount                           uint32
	symbol, field                        uint16
	flags                                uint8
}

// flat_fill writes flat_node values into a []flatNode: the two must agree
// field by field.
func init() {
	var g flatNode
	var c C.flat_node
	if unsafe.Sizeof(g) != unsafe.Sizeof(c) ||
		unsafe.Offsetof(g.startByte) != unsafe.Offsetof(c.start_byte) || unsafe.Offsetof(g.endByte) != unsafe.Offsetof(c.end_byte) ||
		unsafe.Offsetof(g.startRow) != unsafe.Offsetof(c.start_row) || unsafe.Offsetof(g.endRow) != unsafe.Offsetof(c.end_row) ||
		unsafe.Offsetof(g.parent) != unsafe.Offsetof(c.parent) || unsafe.Offsetof(g.firstChild) != unsafe.Offsetof(c.first_child) ||
		unsafe.Offsetof(g.nextSibling) != unsafe.Offsetof(c.next_sibling) || unsafe.Offsetof(g.childCount) != unsafe.Offsetof(c.child_count) ||
		unsafe.Offsetof(g.symbol) != unsafe.Offsetof(c.symbol) || unsafe.Offsetof(g.field) != unsafe.Offsetof(c.field) ||
		unsafe.Offsetof(g.flags) != unsafe.Offsetof(c.flags) {
		panic("codegraph: flatNode and flat_node differ in layout")
	}
}

// symbolNames caches a grammar's symbol and field names.
type symbolNames struct {
	symbols []string
	fields  []string
	fieldID map[string]uint16
	// container marks the symbols whose children are a file's members
	// (containerTypes; in C also cContainerTypes).
	container []bool
	// record marks, in C, the specifiers whose field lists are containers
	// where a member holds them (typedef struct {…} T;).
	record []bool
	// named is 1 for the named symbols (flat_fill).
	named []uint8
	// inSet[s.id][sym] is whether symbol sym's type is in typeSet s.
	inSet [][]bool
}

var namesCache sync.Map // C grammar address → *symbolNames

func languagePtr(l *sitter.Language) *C.TSLanguage {
	// sitter.Language holds the C pointer as its only field.
	return (*C.TSLanguage)(*(*unsafe.Pointer)(unsafe.Pointer(l)))
}

func namesOf(l *sitter.Language) *symbolNames {
	// Keyed by the C grammar: GetLanguage returns a new wrapper every call.
	lp := languagePtr(l)
	if v, ok := namesCache.Load(uintptr(unsafe.Pointer(lp))); ok {
		return v.(*symbolNames)
	}
	n := &symbolNames{fieldID: map[string]uint16{}}
	for i := C.uint32_t(0); i < C.ts_language_symbol_count(lp); i++ {
		n.symbols = append(n.symbols, C.GoString(C.ts_language_symbol_name(lp, C.TSSymbol(i))))
	}
	n.named = make([]uint8, len(n.symbols)+1) // never empty: flat_fill takes its address
	for i := range n.symbols {
		if C.ts_language_symbol_type(lp, C.TSSymbol(i)) == C.TSSymbolTypeRegular {
			n.named[i] = 1
		}
	}
	n.container = make([]bool, len(n.symbols))
	n.record = make([]bool, len(n.symbols))
	isC := lp == languagePtr(tsc.GetLanguage())
	for i, name := range n.symbols {
		n.container[i] = containerTypes[name] != "" || isC && cContainerTypes[name]
		n.record[i] = isC && (name == "struct_specifier" || name == "union_specifier")
	}
	n.inSet = make([][]bool, len(typeSets))
	for _, set := range typeSets {
		n.inSet[set.id] = make([]bool, len(n.symbols))
		for i, name := range n.symbols {
			n.inSet[set.id][i] = set.types[name]
		}
	}
	n.fields = append(n.fields, "")
	for i := C.uint32_t(1); i <= C.ts_language_field_count(lp); i++ {
		name := C.GoString(C.ts_language_field_name_for_id(lp, C.TSFieldId(i)))
		n.fields = append(n.fields, name)
		n.fieldID[name] = uint16(i)
	}
	v, _ := namesCache.LoadOrStore(uintptr(unsafe.Pointer(lp)), n)
	return v.(*symbolNames)
}

// typeSet is a set of node types that also answers for a node by its
// symbol, through a table each grammar's symbolNames holds, so that a
// walk's hot loop neither hashes nor compares type names. Sets are made at
// package initialization (package-level variables): namesOf builds the
// tables of every set there is.
type typeSet struct {
	id    int // index in typeSets and in symbolNames.inSet
	types map[string]bool
}

var typeSets []*typeSet

func newTypeSet(types ...string) *typeSet {
	s := &typeSet{id: len(typeSets), types: map[string]bool{}}
	for _, t := range types {
		s.types[t] = true
	}
	typeSets = append(typeSets, s)
	return s
}

// has reports whether type t is in the set.
func (s *typeSet) has(t string) bool { return s.types[t] }

// hasNode reports whether n's type is in the set; a nil n is not.
func (s *typeSet) hasNode(n *fnode) bool {
	return n != nil && s.hasSymbol(n.t.names, n.t.nodes[n.i].symbol)
}

// hasSymbol reports whether the nodes with symbol sym are in the set. The
// symbols past the grammar's own are ERROR and its repeats.
func (s *typeSet) hasSymbol(names *symbolNames, sym uint16) bool {
	if int(sym) >= len(names.symbols) || s.id >= len(names.inSet) { // a set made after the grammar's names
		return s.types[names.symbolType(sym)]
	}
	return names.inSet[s.id][sym]
}

// ErrParseTimeout: tree-sitter gave up on a file before its context's
// deadline (see Options.ParseTimeout).
var ErrParseTimeout = errors.New("parse timed out")

// parseFlat parses src with lang and returns the flattened tree. Parsing
// stops at ctx's deadline, if it has one (ErrParseTimeout).
func parseFlat(ctx context.Context, lang *sitter.Language, path string, src []byte) (*flatTree, error) {
	return reparseFlat(ctx, lang, path, src, nil)
}

// reparseFlat is parseFlat, reading src as an edit of base's text when base
// is not nil: tree-sitter then reuses the parts of base's tree that the
// edits leave alone. base must have been parsed with lang.
func reparseFlat(ctx context.Context, lang *sitter.Language, path string, src []byte, base *flatTree) (*flatTree, error) {
	var timeout time.Duration
	if d, ok := ctx.Deadline(); ok {
		if timeout = time.Until(d); timeout <= 0 {
			return nil, fmt.Errorf("parse %s: %w", path, ErrParseTimeout)
		}
	}
	names := namesOf(lang)
	var cs *C.char
	if len(src) > 0 {
		// tree-sitter reads the text only while it parses, and the tree
		// does not point into it.
		cs = (*C.char)(unsafe.Pointer(&src[0]))
	}
	var rc C.int
	var tree *C.TSTree
	if base != nil && base.ctree != nil {
		edits := editsBetween(base.src, src)
		var ep *C.TSInputEdit
		if len(edits) > 0 {
			ep = &edits[0]
		}
		tree = C.flat_reparse(languagePtr(lang), base.ctree, ep, C.int(len(edits)), cs, C.uint32_t(len(src)), C.uint64_t(timeout.Microseconds()), &rc)
	} else {
		tree = C.flat_parse(languagePtr(lang), cs, C.uint32_t(len(src)), C.uint64_t(timeout.Microseconds()), &rc)
	}
	if tree == nil {
		if rc == 2 && timeout > 0 {
			return nil, fmt.Errorf("parse %s: %w (%s)", path, ErrParseTimeout, timeout.Round(time.Millisecond))
		}
		return nil, fmt.Errorf("parse %s: tree-sitter returned no tree", path)
	}
	// The nodes are written straight into Go memory (they hold no Go
	// pointers; flatNode and flat_node have one layout, checked in init).
	t, _ := flatPool.Get().(*flatTree)
	if t == nil {
		t = &flatTree{}
	}
	count := int(C.flat_count(tree))
	nodes := grow(t.nodes, count)
	kids, named := grow(t.kids, count), grow(t.named, count)
	kidStart, namedStart := grow(t.kidStart, count+1), grow(t.namedStart, count+1)
	var n C.int64_t
	var lists C.int
	if count > 0 {
		n = C.flat_fill(tree, (*C.flat_node)(unsafe.Pointer(&nodes[0])), C.int64_t(count),
			(*C.uint8_t)(unsafe.Pointer(&names.named[0])), C.uint32_t(len(names.symbols)),
			(*C.int32_t)(unsafe.Pointer(&kids[0])), (*C.int32_t)(unsafe.Pointer(&named[0])),
			(*C.int32_t)(unsafe.Pointer(&kidStart[0])), (*C.int32_t)(unsafe.Pointer(&namedStart[0])), &lists)
	}
	t.kids, t.named, t.kidStart, t.namedStart = kids[:0], named[:0], kidStart, namedStart
	t.ctree = tree // deleted by dropCTree or release
	if n < 0 || int(n) != len(nodes) {
		t.nodes = nodes
		t.release()
		return nil, fmt.Errorf("parse %s: tree-sitter counted %d nodes, the walk found others", path, len(nodes))
	}
	t.nodes, t.src, t.names = nodes, src, names
	if t.filled = lists == 1; t.filled {
		t.kids, t.named = kids[:kidStart[count]], named[:namedStart[count]]
	} else {
		t.index()
	}
	t.fnodes = grow(t.fnodes, count)
	clear(t.fnodes)
	return t, nil
}

// editsBetween describes how to turn old into new for tree-sitter: a
// replacement for each run of bytes that differ where both texts have
// them, then an insertion or deletion at the end if their lengths differ.
// Edits apply in order, each in the text the ones before it left, which
// is new's up to the edit's start.
func editsBetween(old, new []byte) []C.TSInputEdit {
	var edits []C.TSInputEdit
	var row, col uint32 // new's point at pos
	pos := 0
	advance := func(text []byte, from, to int, row, col uint32) (uint32, uint32) {
		for _, c := range text[from:to] {
			if c == '\n' {
				row, col = row+1, 0
			} else {
				col++
			}
		}
		return row, col
	}
	point := func(row, col uint32) C.TSPoint { return C.TSPoint{row: C.uint32_t(row), column: C.uint32_t(col)} }
	edit := func(start, oldEnd, newEnd int) {
		row, col = advance(new, pos, start, row, col)
		pos = start
		or, oc := advance(old, start, oldEnd, row, col)
		nr, nc := advance(new, start, newEnd, row, col)
		edits = append(edits, C.TSInputEdit{start_byte: C.uint32_t(start), old_end_byte: C.uint32_t(oldEnd), new_end_byte: C.uint32_t(newEnd),
			start_point: point(row, col), old_end_point: point(or, oc), new_end_point: point(nr, nc)})
	}
	n := min(len(old), len(new))
	for i := 0; i < n; {
		if old[i] == new[i] {
			i++
			continue
		}
		j := i + 1
		for j < n && old[j] != new[j] {
			j++
		}
		edit(i, j, j)
		i = j
	}
	if len(old) != len(new) {
		edit(n, len(old), len(new))
	}
	return edits
}

// index builds the child lists, so Child and NamedChild are O(1), where
// flat_fill could not (reparseFlat).
func (t *flatTree) index() {
	t.kids = grow(t.kids, len(t.nodes))[:0]
	t.named = grow(t.named, len(t.nodes))[:0]
	t.kidStart = grow(t.kidStart, len(t.nodes)+1)
	t.namedStart = grow(t.namedStart, len(t.nodes)+1)
	for i := range t.nodes {
		t.kidStart[i] = int32(len(t.kids))
		t.namedStart[i] = int32(len(t.named))
		for c := t.nodes[i].firstChild; c >= 0; c = t.nodes[c].nextSibling {
			t.kids = append(t.kids, c)
			if t.nodes[c].flags&1 != 0 {
				t.named = append(t.named, c)
			}
		}
	}
	t.kidStart[len(t.nodes)] = int32(len(t.kids))
	t.namedStart[len(t.nodes)] = int32(len(t.named))
}

// fnode is a node of a flatTree, with the methods of the tree-sitter
// bindings' Node that the extractors use. A nil *fnode is "no node".
type fnode struct {
	t *flatTree
	i int32
}

func (t *flatTree) node(i int32) *fnode {
	if i < 0 || int(i) >= len(t.nodes) {
		return nil
	}
	n := &t.fnodes[i]
	if n.t == nil {
		n.t, n.i = t, i
	}
	return n
}

func (n *fnode) f() *flatNode { return &n.t.nodes[n.i] }

// Type is the node's grammar type ("function_definition").
func (n *fnode) Type() string { return n.t.typeOf(n.i) }

// typeOf is node i's type.
func (t *flatTree) typeOf(i int32) string { return t.names.symbolType(t.nodes[i].symbol) }

// symbolType is the type of the nodes with symbol s.
func (n *symbolNames) symbolType(s uint16) string {
	if int(s) < len(n.symbols) {
		return n.symbols[s]
	} else if s == 0xFFFF { // ts_builtin_sym_error
		return "ERROR"
	}
	return "_ERROR" // ts_builtin_sym_error_repeat
}

// subtreeEnd is where n's subtree ends among the tree's nodes: preorder
// keeps a subtree contiguous, from n to the next sibling of n or of its
// nearest ancestor that has one.
func (n *fnode) subtreeEnd() int32 {
	for a := n.i; a >= 0; a = n.t.nodes[a].parent {
		if s := n.t.nodes[a].nextSibling; s >= 0 {
			return s
		}
	}
	return int32(len(n.t.nodes))
}
func (n *fnode) StartByte() uint32 { return n.f().startByte }
func (n *fnode) EndByte() uint32   { return n.f().endByte }

// StartPoint and EndPoint carry the row only (columns are not kept).
func (n *fnode) StartPoint() sitter.Point { return sitter.Point{Row: n.f().startRow} }
func (n *fnode) EndPoint() sitter.Point   { return sitter.Point{Row: n.f().endRow} }
func (n *fnode) IsNamed() bool            { return n.f().flags&1 != 0 }
func (n *fnode) IsMissing() bool          { return n.f().flags&2 != 0 }
func (n *fnode) IsError() bool            { return n.f().flags&4 != 0 }
func (n *fnode) HasError() bool           { return n.f().flags&8 != 0 }
func (n *fnode) Parent() *fnode           { return n.t.node(n.f().parent) }
func (n *fnode) Equal(o *fnode) bool      { return o != nil && n.t == o.t && n.i == o.i }
func (n *fnode) ChildCount() uint32       { return uint32(n.t.kidStart[n.i+1] - n.t.kidStart[n.i]) }
func (n *fnode) NamedChildCount() uint32  { return uint32(n.t.namedStart[n.i+1] - n.t.namedStart[n.i]) }

func (n *fnode) Child(i int) *fnode {
	if i < 0 || uint32(i) >= n.ChildCount() {
		return nil
	}
	return n.t.node(n.t.kids[n.t.kidStart[n.i]+int32(i)])
}

// namedToken reports whether n's i-th named child is a token (it has no
// children) and not an ERROR, without making the child's *fnode: walks
// that act on none of them skip them at the cost of two array reads.
func (n *fnode) namedToken(i int) bool {
	t := n.t
	c := t.named[t.namedStart[n.i]+int32(i)]
	return t.kidStart[c+1] == t.kidStart[c] && t.nodes[c].flags&4 == 0
}

func (n *fnode) NamedChild(i int) *fnode {
	if i < 0 || uint32(i) >= n.NamedChildCount() {
		return nil
	}
	return n.t.node(n.t.named[n.t.namedStart[n.i]+int32(i)])
}

// Kids yields n's children in order, and NamedKids its named children,
// without building a list; a nil n has none. A loop body that captures
// variables is still allocated per call: hot loops index instead
// (NamedChildCount, NamedChild).
func (n *fnode) Kids() iter.Seq[*fnode] {
	if n == nil {
		return func(func(*fnode) bool) {}
	}
	return n.t.seq(n.t.kids[n.t.kidStart[n.i]:n.t.kidStart[n.i+1]])
}

func (n *fnode) NamedKids() iter.Seq[*fnode] {
	if n == nil {
		return func(func(*fnode) bool) {}
	}
	return n.t.seq(n.t.named[n.t.namedStart[n.i]:n.t.namedStart[n.i+1]])
}

// seq yields the nodes of ids.
func (t *flatTree) seq(ids []int32) iter.Seq[*fnode] {
	return func(yield func(*fnode) bool) {
		for _, c := range ids {
			if !yield(t.node(c)) {
				return
			}
		}
	}
}

// ChildByFieldName is the first child in the named field.
func (n *fnode) ChildByFieldName(name string) *fnode {
	id, ok := n.t.names.fieldID[name]
	if !ok {
		return nil
	}
	for _, c := range n.t.kids[n.t.kidStart[n.i]:n.t.kidStart[n.i+1]] {
		if n.t.nodes[c].field == id {
			return n.t.node(c)
		}
	}
	return nil
}

// FieldNameForChild is the field of the i-th child, "" if none.
func (n *fnode) FieldNameForChild(i int) string {
	c := n.Child(i)
	if c == nil {
		return ""
	}
	return n.t.names.fields[c.f().field]
}

// fcursor walks a flatTree like the bindings' TreeCursor.
type fcursor struct {
	t    *flatTree
	i    int32
	root int32
}

func newCursor(n *fnode) *fcursor           { return &fcursor{n.t, n.i, n.i} }
func (c *fcursor) Close()                   {}
func (c *fcursor) CurrentNode() *fnode      { return c.t.node(c.i) }
func (c *fcursor) CurrentFieldName() string { return c.t.names.fields[c.t.nodes[c.i].field] }
func (c *fcursor) GoToFirstChild() bool {
	if fc := c.t.nodes[c.i].firstChild; fc >= 0 {
		c.i = fc
		return true
	}
	return false
}

func (c *fcursor) GoToNextSibling() bool {
	if c.i == c.root {
		return false
	}
	if s := c.t.nodes[c.i].nextSibling; s >= 0 {
		c.i = s
		return true
	}
	return false
}

func (c *fcursor) GoToParent() bool {
	if c.i == c.root {
		return false
	}
	c.i = c.t.nodes[c.i].parent
	return true
}
