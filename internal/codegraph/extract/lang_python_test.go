package extract

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func TestPythonLinesAndSpans(t *testing.T) {
	src := []byte(`import os.path as p, sys
from .x import (
    y,
    z as w,
)

@app.route("/")
@cached
async def handler(req):
    return p.join(req.path)

class A(B):
    @property
    def v(self):
        return 1
`)
	res, err := pythonLang{}.Extract(context.Background(), "m.py", src)
	if err != nil {
		t.Fatal(err)
	}
	wantImports := []Import{
		{Module: "os.path", Alias: "p", Line: 1},
		{Module: "sys", Line: 1},
		{Module: ".x", Names: []string{"y", "z"}, Locals: []string{"", "w"}, Line: 2},
	}
	if !reflect.DeepEqual(res.Imports, wantImports) {
		t.Errorf("imports:\n got %+v\nwant %+v", res.Imports, wantImports)
	}
	wantCalls := []Call{
		{From: "", Callee: "app.route", Line: 7},
		{From: "handler", Callee: "p.join", Line: 10},
	}
	if !reflect.DeepEqual(res.Calls, wantCalls) {
		t.Errorf("calls:\n got %+v\nwant %+v", res.Calls, wantCalls)
	}
	// Spans start at def/class (async included), never at a decorator.
	starts := map[string]string{"handler": "async def handler", "A": "class A", "A.v": "def v"}
	for _, d := range res.Defs {
		want, ok := starts[d.Name]
		if !ok {
			t.Errorf("unexpected def %q", d.Name)
			continue
		}
		if got := string(src[d.StartByte:d.EndByte]); !strings.HasPrefix(got, want) {
			t.Errorf("%s starts %q, want prefix %q", d.Name, got, want)
		}
		delete(starts, d.Name)
	}
	if len(starts) > 0 {
		t.Errorf("missing defs: %v", starts)
	}
	if res.ErrorNodes != 0 {
		t.Errorf("errors = %d", res.ErrorNodes)
	}
}

func TestPythonCallee(t *testing.T) {
	// Callees in visiting order: an outer call before the calls inside it.
	cases := map[string][]string{
		"foo()":              {"foo"},
		"self.foo()":         {"self.foo"},
		"os.path.join()":     {"os.path.join"},
		"a().b()":            {"b", "a"}, // the trailing attribute chain of a computed receiver
		"a().b.c()":          {"b.c", "a"},
		"x[0].save()":        {"save"},
		"'-'.join(xs)":       {"join"},
		"x[0]()":             nil, // nothing names the callee
		"f()()":              {"f"},
		"(lambda: g())()":    {"g"},
		"super().__init__()": {"__init__", "super"},
	}
	for expr, want := range cases {
		res, err := pythonLang{}.Extract(context.Background(), "m.py", []byte(expr+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range res.Calls {
			got = append(got, c.Callee)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: callees %q, want %q", expr, got, want)
		}
	}
}

func TestPythonRegistered(t *testing.T) {
	if l := languageFor("pkg/mod.py"); l == nil || l.Name() != "python" {
		t.Fatalf("languageFor(.py) = %v", l)
	}
}
