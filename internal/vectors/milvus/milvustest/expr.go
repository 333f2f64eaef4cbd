package milvustest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/milvus-io/milvus-proto/go-api/v2/schemapb"
)

// The subset of Milvus' boolean expression language the fake evaluates:
// comparisons (== != < <= > >=) of a scalar field with a literal, "in" and
// "not in" lists, and/or/not (also && || !) and parentheses. String
// literals are read the way Milvus reads them (Go unquoting rules). Anything
// else is a parse error, as an unsupported expression would be on a server.

type expr interface {
	eval(r row) bool
}

type andExpr struct{ l, r expr }
type orExpr struct{ l, r expr }
type notExpr struct{ e expr }
type cmpExpr struct {
	field string
	op    string
	lit   any // int64, float64 or string
}
type inExpr struct {
	field string
	lits  []any
	neg   bool
}

func (e andExpr) eval(r row) bool { return e.l.eval(r) && e.r.eval(r) }
func (e orExpr) eval(r row) bool  { return e.l.eval(r) || e.r.eval(r) }
func (e notExpr) eval(r row) bool { return !e.e.eval(r) }

func (e cmpExpr) eval(r row) bool {
	c := compare(r[e.field], e.lit)
	switch e.op {
	case "==":
		return c == 0
	case "!=":
		return c != 0
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	default:
		return c >= 0
	}
}

func (e inExpr) eval(r row) bool {
	v := r[e.field]
	for _, l := range e.lits {
		if compare(v, l) == 0 {
			return !e.neg
		}
	}
	return e.neg
}

// compare orders a stored value against a literal already checked for type.
func compare(v, lit any) int {
	switch v := v.(type) {
	case int64:
		switch l := lit.(type) {
		case int64:
			return cmpOrdered(v, l)
		case float64:
			return cmpOrdered(float64(v), l)
		}
	case string:
		return strings.Compare(v, lit.(string))
	}
	return -2
}

func cmpOrdered[T int64 | float64](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

type token struct {
	kind string // "ident", "int", "float", "string", "op", "eof"
	text string
	val  any
	pos  int
}

func tokenize(s string) ([]token, error) {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			raw := s[i : j+1]
			if c == '\'' {
				// 'x' → "x": unescape \' and escape bare double quotes.
				inner := strings.ReplaceAll(raw[1:len(raw)-1], `\'`, `'`)
				var b strings.Builder
				for k := 0; k < len(inner); k++ {
					if inner[k] == '\\' && k+1 < len(inner) {
						b.WriteString(inner[k : k+2])
						k++
						continue
					}
					if inner[k] == '"' {
						b.WriteByte('\\')
					}
					b.WriteByte(inner[k])
				}
				raw = `"` + b.String() + `"`
			}
			v, err := strconv.Unquote(raw)
			if err != nil {
				return nil, fmt.Errorf("bad string literal %s at %d: %v", s[i:j+1], i, err)
			}
			out = append(out, token{"string", s[i : j+1], v, i})
			i = j + 1
		case c >= '0' && c <= '9' || c == '-' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			j := i + 1
			for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' || s[j] == 'e' || s[j] == 'E') {
				j++
			}
			text := s[i:j]
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				out = append(out, token{"int", text, n, i})
			} else if f, err := strconv.ParseFloat(text, 64); err == nil {
				out = append(out, token{"float", text, f, i})
			} else {
				return nil, fmt.Errorf("bad number %q at %d", text, i)
			}
			i = j
		case c == '_' || c == '$' || unicode.IsLetter(rune(c)):
			j := i + 1
			for j < len(s) && (s[j] == '_' || s[j] >= '0' && s[j] <= '9' || unicode.IsLetter(rune(s[j]))) {
				j++
			}
			out = append(out, token{"ident", s[i:j], nil, i})
			i = j
		default:
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch {
			case two == "==" || two == "!=" || two == "<=" || two == ">=" || two == "&&" || two == "||":
				out = append(out, token{"op", two, nil, i})
				i += 2
			case strings.IndexByte("<>()[],!", c) >= 0:
				out = append(out, token{"op", string(c), nil, i})
				i++
			default:
				return nil, fmt.Errorf("unexpected character %q at %d", c, i)
			}
		}
	}
	return append(out, token{kind: "eof", pos: len(s)}), nil
}

type parser struct {
	toks   []token
	i      int
	fields map[string]*schemapb.FieldSchema
}

// parseExpr parses s against the collection's fields: unknown fields and
// literals of the wrong type are errors, as on a server.
func parseExpr(s string, fields map[string]*schemapb.FieldSchema) (expr, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, fmt.Errorf("cannot parse expression: %s, error: %v", s, err)
	}
	p := &parser{toks: toks, fields: fields}
	e, err := p.or()
	if err == nil && p.peek().kind != "eof" {
		err = fmt.Errorf("unexpected %q at %d", p.peek().text, p.peek().pos)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot parse expression: %s, error: %v", s, err)
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) isWord(words ...string) bool {
	t := p.peek()
	for _, w := range words {
		if (t.kind == "ident" || t.kind == "op") && strings.EqualFold(t.text, w) {
			return true
		}
	}
	return false
}

func (p *parser) or() (expr, error) {
	l, err := p.and()
	for err == nil && p.isWord("or", "||") {
		p.next()
		var r expr
		if r, err = p.and(); err == nil {
			l = orExpr{l, r}
		}
	}
	return l, err
}

func (p *parser) and() (expr, error) {
	l, err := p.unary()
	for err == nil && p.isWord("and", "&&") {
		p.next()
		var r expr
		if r, err = p.unary(); err == nil {
			l = andExpr{l, r}
		}
	}
	return l, err
}

func (p *parser) unary() (expr, error) {
	if p.isWord("not", "!") {
		p.next()
		e, err := p.unary()
		return notExpr{e}, err
	}
	if p.isWord("(") {
		p.next()
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.isWord(")") {
			return nil, fmt.Errorf("missing ) at %d", p.peek().pos)
		}
		p.next()
		return e, nil
	}
	return p.predicate()
}

func (p *parser) predicate() (expr, error) {
	t := p.next()
	if t.kind != "ident" {
		return nil, fmt.Errorf("expected a field name at %d, got %q", t.pos, t.text)
	}
	f, ok := p.fields[t.text]
	if !ok {
		return nil, fmt.Errorf("field %s not exist", t.text)
	}
	switch f.GetDataType() {
	case schemapb.DataType_Int64, schemapb.DataType_VarChar:
	default:
		return nil, fmt.Errorf("field %s of type %v cannot be filtered by this server", t.text, f.GetDataType())
	}
	neg := false
	if p.isWord("not") {
		p.next()
		neg = true
		if !p.isWord("in") {
			return nil, fmt.Errorf("expected in after not at %d", p.peek().pos)
		}
	}
	if p.isWord("in") {
		p.next()
		if !p.isWord("[") {
			return nil, fmt.Errorf("expected [ at %d", p.peek().pos)
		}
		p.next()
		var lits []any
		for !p.isWord("]") {
			if len(lits) > 0 {
				if !p.isWord(",") {
					return nil, fmt.Errorf("expected , at %d", p.peek().pos)
				}
				p.next()
			}
			l, err := p.literal(f)
			if err != nil {
				return nil, err
			}
			lits = append(lits, l)
		}
		p.next()
		return inExpr{t.text, lits, neg}, nil
	}
	op := p.next()
	switch op.text {
	case "==", "!=", "<", "<=", ">", ">=":
	default:
		return nil, fmt.Errorf("expected a comparison after %s at %d, got %q", t.text, op.pos, op.text)
	}
	l, err := p.literal(f)
	if err != nil {
		return nil, err
	}
	return cmpExpr{t.text, op.text, l}, nil
}

func (p *parser) literal(f *schemapb.FieldSchema) (any, error) {
	t := p.next()
	switch {
	case f.GetDataType() == schemapb.DataType_VarChar && t.kind == "string",
		f.GetDataType() == schemapb.DataType_Int64 && (t.kind == "int" || t.kind == "float"):
		return t.val, nil
	case t.kind == "eof" || t.kind == "op" || t.kind == "ident":
		return nil, fmt.Errorf("expected a literal at %d, got %q", t.pos, t.text)
	}
	return nil, fmt.Errorf("comparisons between %v field %s and %s literal %s are not supported", f.GetDataType(), f.GetName(), t.kind, t.text)
}
