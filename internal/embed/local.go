package embed

import (
	"context"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// Lexical is the local default embedder: feature hashing of code-aware tokens
// into Dims buckets. It needs no model and no GPU and is deterministic, but it
// is lexical, not semantic: two texts are close when they share identifiers.
// Every output that used it says so through its name.
type Lexical struct {
	// Dims is the vector size; default 512.
	Dims int
}

// Name says what the vectors are.
func (l *Lexical) Name() string { return "lexical-hash-" + strconv.Itoa(l.dim()) }

// Dim is the vector size.
func (l *Lexical) Dim() int { return l.dim() }

func (l *Lexical) dim() int {
	if l.Dims <= 0 {
		return 512
	}
	return l.Dims
}

// Embed hashes each text's tokens (whole identifiers and their camelCase /
// snake_case parts) with signed feature hashing, log-scaled counts, L2-normalised.
func (l *Lexical) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	d := l.dim()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		counts := map[string]int{}
		for _, tok := range lexTokens(t) {
			counts[tok]++
		}
		v := make([]float32, d)
		for tok, c := range counts {
			h := fnv.New64a()
			h.Write([]byte(tok))
			x := h.Sum64()
			sign := float32(1)
			if x>>63 == 1 {
				sign = -1
			}
			v[x%uint64(d)] += sign * float32(1+math.Log(float64(c)))
		}
		var norm float64
		for _, f := range v {
			norm += float64(f) * float64(f)
		}
		if norm > 0 {
			inv := float32(1 / math.Sqrt(norm))
			for j := range v {
				v[j] *= inv
			}
		}
		out[i] = v
	}
	return out, nil
}

// lexTokens splits text into lower-case identifier tokens and their parts.
func lexTokens(s string) []string {
	var out []string
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' })
	for _, w := range words {
		lw := strings.ToLower(w)
		if len(lw) >= 2 {
			out = append(out, lw)
		}
		parts := splitIdent(w)
		if len(parts) > 1 {
			for _, p := range parts {
				if len(p) >= 2 {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// splitIdent splits camelCase, PascalCase (with acronyms) and snake_case.
func splitIdent(w string) []string {
	var parts []string
	var cur []rune
	rs := []rune(w)
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case r == '_':
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			(i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1]))):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return parts
}

// Cosine is the cosine similarity of two vectors of equal length.
func Cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}
