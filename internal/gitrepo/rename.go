package gitrepo

import (
	"bytes"
	"slices"
	"sort"
)

// Rename detection follows git's diffcore-rename.c and diffcore-delta.c as
// `git log -M` runs them (renames, not copies, no break detection), rule by
// rule, so that a commit's renames are the ones git reports:
//
//  1. Candidates: every deleted path is a source and every added path a
//     destination, of any mode (submodules and symbolic links included);
//     empty files too (diff.renames' rename_empty is on by default).
//  2. Exact renames (find_exact_renames): destinations in path order each
//     take an unused source with the same blob id; files that are not
//     regular must have the same mode. Among the first 100 such sources the
//     first with the same file name is preferred, then the first.
//  3. Same file name (find_basename_matches, git 2.33 and later): a file
//     name that is unique among the remaining sources and unique among the
//     remaining destinations pairs them when their similarity is at least
//     75% (halfway between the minimum score and 100%).
//  4. The rename limit (too_many_rename_candidates): the inexact search runs
//     only when sources × destinations left is at most limit² (diff.renameLimit,
//     default 1000).
//  5. Inexact renames: every remaining pair of regular files is scored
//     (estimate_similarity); each destination keeps its 4 best sources
//     (record_if_better), all kept pairs are sorted by score, then same
//     file name, stably; pairs at or above 50% are taken in that order,
//     each source and destination once (find_renames).
//  6. Similarity (estimate_similarity, diffcore_count_changes): files whose
//     sizes differ by more than half the larger one score 0; otherwise the
//     content is cut into chunks ending at a newline or after 64 bytes,
//     with the CR of every CRLF left out in text files (no NUL in the first
//     8000 bytes), each chunk hashed as hash_chars does into one of 107,927
//     buckets; a last chunk without a newline and under 64 bytes is not
//     counted. The score is the bytes of the destination's chunks also in
//     the source (per bucket, the smaller count), over the larger file's
//     size, in git's 60,000 scale.
//
// .gitattributes are not read (git log in a bare repository does not read
// them either, before git 2.43), so a text file marked binary there is text
// here.
const (
	maxScore       = 60000 // MAX_SCORE
	minRenameScore = 30000 // DEFAULT_RENAME_SCORE, 50%
	// minBasenameScore is minimum_score + 0.5 * (MAX_SCORE - minimum_score).
	minBasenameScore = minRenameScore + (maxScore-minRenameScore)/2
	candidatesPerDst = 4   // NUM_CANDIDATE_PER_DST
	exactAlternates  = 100 // find_identical_files gives up after this many
	spanHashBase     = 107927
)

func isRegular(mode uint32) bool { return mode&0o170000 == 0o100000 }

// baseName is the part of a path after its last slash.
func baseName(p []byte) []byte {
	if i := bytes.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func sameBaseName(a, b []byte) bool { return bytes.Equal(baseName(a), baseName(b)) }

// spanHashes is diffcore-delta.c's hash_chars: bytes per bucket of the
// content's chunks.
type spanHashes map[uint32]uint32

func hashChars(data []byte) spanHashes {
	text := !isBinary(data)
	m := make(spanHashes)
	var accum1, accum2 uint32
	n := uint32(0)
	for i := 0; i < len(data); i++ {
		c := uint32(data[i])
		if text && c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			continue // git ignores the CR of CRLF in text
		}
		old1 := accum1
		accum1 = (accum1 << 7) ^ (accum2 >> 25)
		accum2 = (accum2 << 7) ^ (old1 >> 25)
		accum1 += c
		n++
		if n < 64 && c != '\n' {
			continue
		}
		m[(accum1+accum2*0x61)%spanHashBase] += n
		n, accum1, accum2 = 0, 0, 0
	}
	// A last chunk that neither ends a line nor fills 64 bytes is not
	// counted: hash_chars adds chunks only inside its loop.
	return m
}

// copied is diffcore_count_changes' src_copied: the destination's bytes also
// in the source, per bucket.
func copied(src, dst spanHashes) uint64 {
	var sc uint64
	for h, dc := range dst {
		if s, ok := src[h]; ok {
			sc += uint64(min(s, dc))
		}
	}
	return sc
}

// renameFile is what similarity needs of one side: its size and, once
// needed, its chunk hashes.
type renameFile struct {
	size   int
	hashes spanHashes
}

// renameScorer scores pairs, loading each blob at most once.
type renameScorer struct {
	load  func(Hash) ([]byte, error)
	files map[Hash]*renameFile
	// minScore is the least score that makes a rename (its size check
	// depends on it); 0 means git's default, 50%.
	minScore int
}

// file is h's size and hashes; nil when the repository does not have the
// blob (a partial clone or an incomplete mirror).
func (s *renameScorer) file(h Hash) (*renameFile, error) {
	if f, ok := s.files[h]; ok {
		return f, nil
	}
	data, err := s.load(h)
	if isNotFound(err) {
		s.files[h] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f := &renameFile{size: len(data), hashes: hashChars(data)}
	s.files[h] = f
	return f, nil
}

// score is estimate_similarity for deleted src and added dst.
func (s *renameScorer) score(src, dst *change) (int, error) {
	if !isRegular(src.oldMode) || !isRegular(dst.newMode) {
		return 0, nil
	}
	a, err := s.file(src.oldHash)
	if err != nil {
		return 0, err
	}
	b, err := s.file(dst.newHash)
	if err != nil {
		return 0, err
	}
	if a == nil || b == nil {
		// A side's content is missing: no similarity can be measured,
		// and the pair stays a deletion and an addition.
		return 0, nil
	}
	minScore := s.minScore
	if minScore == 0 {
		minScore = minRenameScore
	}
	maxSize, baseSize := max(a.size, b.size), min(a.size, b.size)
	if uint64(maxSize)*uint64(maxScore-minScore) < uint64(maxSize-baseSize)*maxScore {
		return 0, nil
	}
	if b.size == 0 {
		return 0, nil
	}
	return int(copied(a.hashes, b.hashes) * maxScore / uint64(maxSize)), nil
}

// detectRenames pairs the deleted and added files of one commit's changes as
// git log -M does (see the rules above), turning each pair into one
// "renamed" change; limit is diff.renameLimit.
func detectRenames(changes []change, limit int, load func(Hash) ([]byte, error)) ([]change, error) {
	var srcs, dsts []int
	for i := range changes {
		switch changes[i].status {
		case "deleted":
			srcs = append(srcs, i)
		case "added":
			dsts = append(dsts, i)
		}
	}
	if len(srcs) == 0 || len(dsts) == 0 {
		return changes, nil
	}
	usedSrc := make(map[int]bool)
	renamed := make(map[int]bool) // destinations
	pair := func(si, di int) {
		d, s := &changes[di], &changes[si]
		d.status = "renamed"
		d.oldPath, d.oldHash, d.oldMode = s.oldPath, s.oldHash, s.oldMode
		usedSrc[si], renamed[di] = true, true
	}

	// 2. Exact renames.
	byHash := make(map[Hash][]int)
	for _, si := range srcs {
		byHash[changes[si].oldHash] = append(byHash[changes[si].oldHash], si)
	}
	for _, di := range dsts {
		dst := &changes[di]
		best, bestScore, considered := -1, -1, 0
		for _, si := range byHash[dst.newHash] {
			src := &changes[si]
			if (!isRegular(src.oldMode) || !isRegular(dst.newMode)) && src.oldMode != dst.newMode {
				continue
			}
			if usedSrc[si] {
				continue
			}
			score := 1
			if sameBaseName(src.oldPath, dst.newPath) {
				score++
			}
			if score > bestScore {
				best, bestScore = si, score
				if score == 2 {
					break
				}
			}
			if considered++; considered == exactAlternates {
				break
			}
		}
		if best >= 0 {
			pair(best, di)
		}
	}
	left := func(all []int, used map[int]bool) []int {
		var out []int
		for _, i := range all {
			if !used[i] {
				out = append(out, i)
			}
		}
		return out
	}
	srcs, dsts = left(srcs, usedSrc), left(dsts, renamed)
	sc := &renameScorer{load: load, files: make(map[Hash]*renameFile)}

	// 3. Unique file names.
	if len(srcs) > 0 && len(dsts) > 0 {
		unique := func(idx []int, path func(*change) []byte) map[string]int {
			m := make(map[string]int)
			for _, i := range idx {
				b := string(baseName(path(&changes[i])))
				if _, dup := m[b]; dup {
					m[b] = -1
				} else {
					m[b] = i
				}
			}
			return m
		}
		srcNames := unique(srcs, func(c *change) []byte { return c.oldPath })
		dstNames := unique(dsts, func(c *change) []byte { return c.newPath })
		for _, si := range srcs {
			name := baseName(changes[si].oldPath)
			di, ok := dstNames[string(name)]
			if srcNames[string(name)] < 0 || !ok || di < 0 {
				continue
			}
			score, err := sc.score(&changes[si], &changes[di])
			if err != nil {
				return nil, err
			}
			if score >= minBasenameScore {
				pair(si, di)
			}
		}
		srcs, dsts = left(srcs, usedSrc), left(dsts, renamed)
	}

	// 4 and 5. Inexact renames within the limit.
	if len(srcs) > 0 && len(dsts) > 0 && (limit <= 0 || uint64(len(srcs))*uint64(len(dsts)) <= uint64(limit)*uint64(limit)) {
		type cand struct {
			dst, src         int // -1: an empty slot
			score, nameScore int
		}
		// worse is score_compare(a, b) > 0: a sorts after b.
		worse := func(a, b *cand) bool {
			switch {
			case a.dst < 0:
				return b.dst >= 0
			case b.dst < 0:
				return false
			case a.score == b.score:
				return b.nameScore > a.nameScore
			}
			return b.score > a.score
		}
		mx := make([]cand, 0, len(dsts)*candidatesPerDst)
		for _, di := range dsts {
			m := make([]cand, candidatesPerDst)
			for j := range m {
				m[j] = cand{dst: -1, src: -1}
			}
			for _, si := range srcs {
				score, err := sc.score(&changes[si], &changes[di])
				if err != nil {
					return nil, err
				}
				o := cand{dst: di, src: si, score: score}
				if sameBaseName(changes[si].oldPath, changes[di].newPath) {
					o.nameScore = 1
				}
				worst := 0 // record_if_better
				for j := 1; j < candidatesPerDst; j++ {
					if worse(&m[j], &m[worst]) {
						worst = j
					}
				}
				if worse(&m[worst], &o) {
					m[worst] = o
				}
			}
			mx = append(mx, m...)
		}
		sort.SliceStable(mx, func(i, j int) bool { return worse(&mx[j], &mx[i]) })
		for _, c := range mx {
			if c.dst < 0 || c.score < minRenameScore {
				break
			}
			if renamed[c.dst] || usedSrc[c.src] {
				continue
			}
			pair(c.src, c.dst)
		}
	}
	if len(usedSrc) == 0 {
		return changes, nil
	}
	out := changes[:0]
	for i := range changes {
		if !usedSrc[i] {
			out = append(out, changes[i])
		}
	}
	return slices.Clip(out), nil
}
