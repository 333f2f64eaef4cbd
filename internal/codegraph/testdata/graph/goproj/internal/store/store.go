package store

import "sync"

// Store is a locked map.
type Store struct {
	sync.Mutex
	m map[string]int
}

// Getter reads values.
type Getter interface {
	Get(key string) (int, bool)
}

func New() *Store { return &Store{m: map[string]int{}} }

func (s *Store) Put(k string, v int) {
	s.Lock()
	defer s.Unlock()
	s.m[k] = v
}

func (s *Store) Get(k string) (int, bool) {
	s.Lock()
	defer s.Unlock()
	v, ok := s.m[k]
	return v, ok
}
