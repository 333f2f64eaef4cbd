package main

import "context"
import (
	"fmt"
	stdlog "log"
	"net/http"
	_ "net/http/pprof"
	. "strings"

	"github.com/example/app/internal/store"
)

var (
	defaultStore = store.New(store.Options{})
	started      = make(chan struct{})
)

type server struct {
	mux   *http.ServeMux
	store *store.Store
	log   *stdlog.Logger
}

func init() {
	stdlog.SetFlags(0)
}

func init() {
	http.DefaultClient.Timeout = 0
}

// New builds a server.
func New(s *store.Store) *server {
	srv := &server{mux: http.NewServeMux(), store: s}
	srv.routes()
	return srv
}

func (s *server) routes() {
	s.mux.HandleFunc("/items", s.handleItems)
	s.mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, ToUpper("ok"))
	})
}

func (s *server) handleItems(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	items, err := s.store.List(ctx)
	if err != nil {
		s.fail(w, err)
		return
	}
	go func() {
		s.log.Printf("listed %d", len(items))
	}()
	for _, it := range Map[store.Item, string](items, render) {
		w.Write([]byte(it))
	}
	s.cache().Flush()
	s.handlers[0](w, r)
	(*server).fail(s, w, nil)
}

func (s *server) fail(w http.ResponseWriter, err error) {
	type problem struct {
		Code int
		Msg  string
	}
	p := problem{Code: 500, Msg: fmt.Sprint(err)}
	http.Error(w, p.Msg, p.Code)
}

func Map[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

func render(it store.Item) string { return it.Name }

func _() {}

func _() {}

func main() {
	srv := New(defaultStore)
	if err := http.ListenAndServe(":8080", srv.mux); err != nil {
		stdlog.Fatal(err)
	}
}
