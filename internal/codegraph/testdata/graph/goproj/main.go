package main

import (
	"fmt"

	"example.com/goproj/internal/store"
)

func main() {
	s := store.New()
	s.Put("a", 1)
	fmt.Println(helper(s))
}

func helper(s *store.Store) int {
	v, _ := s.Get("a")
	return v
}
