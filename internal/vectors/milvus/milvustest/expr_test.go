package milvustest

import (
	"testing"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"

	"github.com/locus-dev/locus/internal/vectors/milvus"
)

var testFields = map[string]*schemapb.FieldSchema{
	"pk":   {Name: "pk", DataType: schemapb.DataType_Int64, IsPrimaryKey: true},
	"repo": {Name: "repo", DataType: schemapb.DataType_VarChar},
}

func TestQuoteRoundTrip(t *testing.T) {
	for _, s := range []string{"acme/one", `say "hi"`, `back\slash`, "line\nbreak\ttab", "ümlaut/日本", "nul\x00byte", `\"`, "'single'", ""} {
		e, err := parseExpr("repo == "+milvus.Quote(s)+" and pk > 3", testFields)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		if !e.eval(row{"repo": s, "pk": int64(4)}) || e.eval(row{"repo": s + "x", "pk": int64(4)}) || e.eval(row{"repo": s, "pk": int64(3)}) {
			t.Errorf("%q: wrong match", s)
		}
	}
}

func TestExpressions(t *testing.T) {
	r := row{"repo": "a'b", "pk": int64(-7)}
	for expr, want := range map[string]bool{
		`pk in [1,-7,3]`:                      true,
		`pk not in [1, 3]`:                    true,
		`(repo == 'a\'b') && !(pk >= 0)`:      true,
		`repo != "a'b" or pk == -7`:           true,
		`repo == "x" OR (pk < -7 AND pk > 0)`: false,
		`pk <= -7.0`:                          true,
	} {
		e, err := parseExpr(expr, testFields)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if got := e.eval(r); got != want {
			t.Errorf("%s = %v", expr, got)
		}
	}
	for _, bad := range []string{`repo like "a%"`, `nope == 1`, `pk == "1"`, `repo == 1`, `pk in [1,`, `(pk == 1`, `repo == "open`, `pk == 1 pk`} {
		if _, err := parseExpr(bad, testFields); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
