package store

func keys(s *Store) []string {
	var out []string
	for k := range s.m {
		out = append(out, k)
	}
	return out
}

func count(s *Store) int { return len(keys(s)) }
