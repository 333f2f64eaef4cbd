package dataset

import "strings"

// Filter selects benchmark instances. Empty fields select everything; repos
// and languages compare case-insensitively; Limit > 0 keeps the first Limit
// instances that pass the other conditions, in file order.
type Filter struct {
	Repos     []string // "owner/name"
	Languages []string // SWE only; ignored for commit queries (they have no language)
	Splits    []string // commit queries only; ignored for SWE instances
	IDs       []string // instance_id or query_id, exact
	Limit     int
}

func anyFold(list []string, v string) bool {
	if len(list) == 0 {
		return true
	}
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

func anyExact(list []string, v string) bool {
	if len(list) == 0 {
		return true
	}
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// SWE returns the instances of in that pass f, in order. in is not modified.
func (f Filter) SWE(in []SWEInstance) []SWEInstance {
	return keep(in, f.Limit, func(x SWEInstance) bool {
		return anyFold(f.Repos, x.Repo) && anyFold(f.Languages, x.Language) && anyExact(f.IDs, x.InstanceID)
	})
}

// Commits returns the queries of in that pass f, in order. in is not modified.
func (f Filter) Commits(in []CommitQuery) []CommitQuery {
	return keep(in, f.Limit, func(x CommitQuery) bool {
		return anyFold(f.Repos, x.Repo) && anyFold(f.Splits, x.Split) && anyExact(f.IDs, x.QueryID)
	})
}

// keep returns the elements of in for which ok holds, in order, stopping
// after limit of them when limit > 0.
func keep[T any](in []T, limit int, ok func(T) bool) []T {
	var out []T
	for _, x := range in {
		if limit > 0 && len(out) >= limit {
			break
		}
		if ok(x) {
			out = append(out, x)
		}
	}
	return out
}

// ByRepo, ByLanguage and Limit are shorthands for one-condition filters.
func ByRepo(repos ...string) Filter { return Filter{Repos: repos} }

// ByLanguage selects SWE instances of the given languages.
func ByLanguage(langs ...string) Filter { return Filter{Languages: langs} }

// Limit keeps the first n instances.
func Limit(n int) Filter { return Filter{Limit: n} }

// SWERepos lists the distinct repositories of in, in order of first appearance.
func SWERepos(in []SWEInstance) []string {
	return distinct(len(in), func(i int) string { return in[i].Repo })
}

// CommitRepos lists the distinct repositories of in, in order of first appearance.
func CommitRepos(in []CommitQuery) []string {
	return distinct(len(in), func(i int) string { return in[i].Repo })
}

func distinct(n int, at func(int) string) []string {
	seen := make(map[string]bool)
	var out []string
	for i := range n {
		if r := at(i); !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}
