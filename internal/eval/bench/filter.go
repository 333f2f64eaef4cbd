package bench

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
	var out []SWEInstance
	for _, x := range in {
		if f.Limit > 0 && len(out) >= f.Limit {
			break
		}
		if anyFold(f.Repos, x.Repo) && anyFold(f.Languages, x.Language) && anyExact(f.IDs, x.InstanceID) {
			out = append(out, x)
		}
	}
	return out
}

// Commits returns the queries of in that pass f, in order. in is not modified.
func (f Filter) Commits(in []CommitQuery) []CommitQuery {
	var out []CommitQuery
	for _, x := range in {
		if f.Limit > 0 && len(out) >= f.Limit {
			break
		}
		if anyFold(f.Repos, x.Repo) && anyFold(f.Splits, x.Split) && anyExact(f.IDs, x.QueryID) {
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
