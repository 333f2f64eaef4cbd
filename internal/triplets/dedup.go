package triplets

import (
	"strings"
	"unicode"
)

// Dedup keeps a mined set free of repeats across its whole output: a query
// near-identical to an earlier one, a record whose every positive was
// already a positive (the same code), and negatives whose code is a
// positive's anywhere or repeats within the record. Records past MaxPerRepo
// for their repository are dropped too. Not safe for concurrent use.
type Dedup struct {
	// MaxPerRepo caps records per repository; 0: no cap.
	MaxPerRepo int

	queries   map[string]bool
	positives map[string]bool
	perRepo   map[string]int
}

// Why a record is dropped by Dedup.
const (
	DropDuplicateQuery     Skip = "duplicate query"
	DropDuplicatePositives Skip = "every positive already a positive"
	DropRepoCap            Skip = "repository cap reached"
	DropNoNegatives        Skip = "no negative left after dedup"
)

// Keep reports whether r joins the output, trimming its negatives in
// place, or why it is dropped.
func (d *Dedup) Keep(r *Record) Skip {
	if d.queries == nil {
		d.queries, d.positives, d.perRepo = map[string]bool{}, map[string]bool{}, map[string]int{}
	}
	q := QueryKey(r.Query)
	switch {
	case d.queries[q]:
		return DropDuplicateQuery
	case d.MaxPerRepo > 0 && d.perRepo[r.Repo] >= d.MaxPerRepo:
		return DropRepoCap
	}
	fresh := false
	pos := map[string]bool{}
	for _, p := range r.Positives {
		pos[p.Hash] = true
		if !d.positives[p.Hash] {
			fresh = true
		}
	}
	if !fresh {
		return DropDuplicatePositives
	}
	seen := map[string]bool{}
	kept := r.Negatives[:0]
	for _, n := range r.Negatives {
		if pos[n.Hash] || d.positives[n.Hash] || seen[n.Hash] {
			continue
		}
		seen[n.Hash] = true
		kept = append(kept, n)
	}
	r.Negatives = kept
	if len(kept) == 0 {
		return DropNoNegatives
	}
	d.queries[q] = true
	for h := range pos {
		d.positives[h] = true
	}
	d.perRepo[r.Repo]++
	return ""
}

// QueryKey is the dedup key of a query: lower case, letters and digits
// only, digit runs as one 0 (so "bump to 1.2.3" and "bump to 1.2.4" are one
// query).
func QueryKey(q string) string {
	var b strings.Builder
	digit, space := false, false
	for _, r := range strings.ToLower(q) {
		switch {
		case unicode.IsDigit(r):
			if !digit {
				b.WriteByte('0')
			}
			digit, space = true, false
		case unicode.IsLetter(r):
			b.WriteRune(r)
			digit, space = false, false
		default:
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			digit, space = false, true
		}
	}
	return strings.TrimSpace(b.String())
}
