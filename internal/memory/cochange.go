package memory

import (
	"slices"

	"github.com/locus-dev/locus/internal/spider"
)

// Co-change: functions that past commits changed together tend to change
// together again, whether or not the code graph links them (a parser and
// the printer of what it parses, a function and its caller in another
// package).

// Defaults of CoChangeOptions: the best of a small grid on swe-dev, with
// co-change edges in the hybrid method's expansion (search.Params
// CoChangeCost), where they did not beat the method without them.
const (
	DefaultCoChangeMaxFunctions = 8
	DefaultCoChangeLimit        = 3
)

// CoChangeOptions tune co-change neighbours. Zero fields take the defaults
// written next to them.
type CoChangeOptions struct {
	// MaxFunctions: a commit that changed more functions than this (a
	// rename, a reformat, a wide refactor) says nothing about which of them
	// belong together and is ignored; default 8.
	MaxFunctions int
	// Limit is how many neighbours CoChanged returns at most; default 3.
	Limit int
}

func (o CoChangeOptions) withDefaults() CoChangeOptions {
	if o.MaxFunctions <= 0 {
		o.MaxFunctions = DefaultCoChangeMaxFunctions
	}
	if o.Limit <= 0 {
		o.Limit = DefaultCoChangeLimit
	}
	return o
}

// CoChanged returns the functions that the commits this memory allows (the
// base's ancestors strictly older than it: never the base, never later)
// changed together with id, best first, ties by id, at most o.Limit. Each
// such commit that changed n ≤ o.MaxFunctions functions gives each of the
// others Vote(1, its age, HalfLifeDays, n): several recent small commits
// make a strong neighbour, one old one a weak one. The index from functions
// to their commits is built on the first call; safe for concurrent use.
func (e *Episodic) CoChanged(id string, o CoChangeOptions) []spider.Scored {
	o = o.withDefaults()
	rows := e.coChangeRows()[id]
	if len(rows) == 0 {
		return nil
	}
	votes := map[string]float64{}
	for _, r := range rows {
		c := &e.t.commits[r]
		if len(c.Functions) > o.MaxFunctions {
			continue
		}
		w := Vote(1, e.baseTime-c.Time, e.opt.HalfLifeDays, len(c.Functions))
		for _, f := range e.functions(r) {
			if f != id {
				votes[f] += w
			}
		}
	}
	out := make([]spider.Scored, 0, len(votes))
	for f, v := range votes {
		out = append(out, spider.Scored{ID: f, Score: v})
	}
	slices.SortFunc(out, spider.Compare)
	return out[:min(len(out), o.Limit)]
}

// coChangeRows indexes, once, the allowed rows that changed each function
// together with at least one other.
func (e *Episodic) coChangeRows() map[string][]int32 {
	e.coOnce.Do(func() {
		e.co = map[string][]int32{}
		for _, r := range e.rows {
			c := &e.t.commits[r]
			if len(c.Functions) < 2 {
				continue
			}
			for _, f := range e.functions(r) {
				if rs := e.co[f]; len(rs) == 0 || rs[len(rs)-1] != r {
					e.co[f] = append(rs, r) // a function listed twice counts once
				}
			}
		}
	})
	return e.co
}
