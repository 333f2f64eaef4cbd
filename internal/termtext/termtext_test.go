package termtext

import "testing"

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want, lines string }{
		{in: "src/app.py:Server.start", want: "src/app.py:Server.start", lines: "src/app.py:Server.start"},
		{in: "ünïcode/日本.go", want: "ünïcode/日本.go", lines: "ünïcode/日本.go"},
		{in: `quotes "and" back\slash`, want: `quotes "and" back\slash`, lines: `quotes "and" back\slash`},
		{in: "\x1b[2J\x1b]0;pwned\x07.py", want: `\x1b[2J\x1b]0;pwned\a.py`, lines: `\x1b[2J\x1b]0;pwned\a.py`},
		{in: "two\nlines\tand tab", want: `two\nlines\tand tab`, lines: "two\nlines\tand tab"},
		{in: "cr\rdel\x7fnul\x00", want: `cr\rdel\x7fnul\x00`, lines: `cr\rdel\x7fnul\x00`},
		{in: "c1 \u009b31m csi", want: `c1 \u009b31m csi`, lines: `c1 \u009b31m csi`},
		{in: "bidi \u202eexe.txt", want: `bidi \u202eexe.txt`, lines: `bidi \u202eexe.txt`},
		{in: "bad \xff\xfe utf8", want: `bad \xff\xfe utf8`, lines: `bad \xff\xfe utf8`},
		{in: "", want: "", lines: ""},
	} {
		if got := Escape(tc.in); got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Lines(tc.in); got != tc.lines {
			t.Errorf("Lines(%q) = %q, want %q", tc.in, got, tc.lines)
		}
	}
}
