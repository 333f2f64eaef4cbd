package sparse

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"punctuation only", "()[]{} -> :: ... // ++", nil},
		{"lower word", "parser", []string{"parser"}},
		{"camelCase", "getUserName", []string{"getusername", "get", "user", "name"}},
		{"PascalCase", "UserProfileView", []string{"userprofileview", "user", "profile", "view"}},
		{"acronym first", "HTTPServer", []string{"httpserver", "http", "server"}},
		{"acronym middle", "parseJSONBody", []string{"parsejsonbody", "parse", "json", "body"}},
		{"acronym last", "serveHTTP", []string{"servehttp", "serve", "http"}},
		{"all caps constant", "MAX_RETRIES", []string{"max_retries", "max", "retries"}},
		{"acronym plural", "getURLs", []string{"geturls", "get", "url"}},
		{"acronym plural then word", "IDsForUser", []string{"idsforuser", "id", "user"}},
		{"Is prefix is not a plural", "IsValid", []string{"isvalid", "valid"}},
		{"snake_case", "get_user_name", []string{"get_user_name", "get", "user", "name"}},
		{"dunder trimmed", "__init__", []string{"init"}},
		{"leading underscore", "_internal_helper", []string{"internal_helper", "internal", "helper"}},
		{"mixed snake and camel", "load_JSONConfig", []string{"load_jsonconfig", "load", "json", "config"}},
		{"kebab-case", "user-profile-view", []string{"user", "profile", "view"}},
		{"digits", "utf8Decode", []string{"utf8decode", "utf", "decode"}},
		{"digits both sides", "base64ToHex", []string{"base64tohex", "base", "64", "hex"}},
		{"digits after acronym", "HTTP2Server", []string{"http2server", "http", "server"}},
		{"number alone", "error 404 on port 8080", []string{"error", "404", "port", "8080"}},
		{"path", "src/flask/app.py", []string{"src", "flask", "app", "py"}},
		{"windows path", `C:\Users\dev\main.go`, []string{"users", "dev", "main", "go"}},
		{"qualified name", "flask.app.Flask.run", []string{"flask", "app", "flask", "run"}},
		{"locus node id", "src/db.py:Session.commitAll", []string{"src", "db", "py", "session", "commitall", "commit", "all"}},
		{"short tokens dropped", "x = y + zz", []string{"zz"}},
		{"stop words dropped", "The value is not in the list", []string{"value", "list"}},
		{"keyword stop words dropped", "def foo(self): return self.bar", []string{"foo", "bar"}},
		{"stop word as part", "isEmpty", []string{"isempty", "empty"}},
		{"stop word whole kept as compound", "is_it", []string{"is_it"}},
		{"repeats kept", "foo foo Foo", []string{"foo", "foo", "foo"}},
		{"repeated part", "getGet", []string{"getget", "get", "get"}},
		{"unicode lower", "Straße größe", []string{"straße", "größe"}},
		{"unicode camel", "ÜberCoolÄnderung", []string{"übercooländerung", "über", "cool", "änderung"}},
		{"greek camel", "ΣφάλμαΔικτύου", []string{"σφάλμαδικτύου", "σφάλμα", "δικτύου"}},
		{"cyrillic snake", "получить_имя", []string{"получить_имя", "получить", "имя"}},
		{"cjk run is one token", "用户名 错误", []string{"用户名", "错误"}},
		{"cjk single char dropped", "错 x", nil},
		{"combining mark stays in word", "cafe\u0301 menu", []string{"cafe\u0301", "menu"}},
		{"emoji separates", "fix🔥bug", []string{"fix", "bug"}},
		{"superscript number", "x²y", []string{"x²y"}},
		{"too long whole dropped, parts kept",
			strings.Repeat("ab", 40) + "_cd",
			[]string{"cd"}},
		{"issue text", "Flask's `url_for` raises KeyError when SERVER_NAME is unset",
			[]string{"flask", "url_for", "url", "raises", "keyerror", "key", "error", "when", "server_name", "server", "name", "unset"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Tokenize(tc.in)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Tokenize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestAppendTokensAppends(t *testing.T) {
	got := AppendTokens([]string{"keep"}, "fooBar")
	want := []string{"keep", "foobar", "foo", "bar"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestStopWords(t *testing.T) {
	for w := range stopWords {
		if w != strings.ToLower(w) || utf8.RuneCountInString(w) < MinTokenRunes {
			t.Errorf("stop word %q must be lower-case and at least %d runes (else it is dead)", w, MinTokenRunes)
		}
		if !IsStopWord(w) {
			t.Errorf("IsStopWord(%q) = false", w)
		}
	}
	for _, w := range []string{"class", "new", "none", "null", "error", "string"} {
		if IsStopWord(w) {
			t.Errorf("%q should stay searchable", w)
		}
	}
}

// checkTokens verifies the invariants every token obeys.
func checkTokens(t *testing.T, in string, toks []string) {
	t.Helper()
	for _, tok := range toks {
		n := utf8.RuneCountInString(tok)
		if n < MinTokenRunes || n > MaxTokenRunes {
			t.Fatalf("Tokenize(%q): token %q has %d runes", in, tok, n)
		}
		if IsStopWord(tok) {
			t.Fatalf("Tokenize(%q): stop word %q", in, tok)
		}
		if tok != strings.ToLower(tok) {
			t.Fatalf("Tokenize(%q): token %q not lower-case", in, tok)
		}
		if !utf8.ValidString(tok) && utf8.ValidString(in) {
			t.Fatalf("Tokenize(%q): invalid UTF-8 token %q", in, tok)
		}
		if strings.HasPrefix(tok, "_") || strings.HasSuffix(tok, "_") {
			t.Fatalf("Tokenize(%q): token %q keeps edge underscores", in, tok)
		}
		for _, r := range tok {
			if unicode.IsSpace(r) || r == '/' || r == '.' || r == '-' {
				t.Fatalf("Tokenize(%q): token %q holds separator %q", in, tok, r)
			}
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"getUserName", "HTTPServer_v2", "src/a.py:C.m", "ÜberCool", "用户名", "\xff\xfeab", "a_b-c.d/e", "İstanbulİ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a := Tokenize(in)
		checkTokens(t, in, a)
		if b := Tokenize(in); !slices.Equal(a, b) {
			t.Fatalf("Tokenize(%q) not deterministic: %q vs %q", in, a, b)
		}
	})
}

func BenchmarkTokenize(b *testing.B) {
	corpus := syntheticCorpus(200, 1)
	var bytes int64
	for _, d := range corpus {
		bytes += int64(len(d.text))
	}
	b.SetBytes(bytes / int64(len(corpus)))
	var toks []string
	i := 0
	for b.Loop() {
		toks = AppendTokens(toks[:0], corpus[i%len(corpus)].text)
		i++
	}
}
