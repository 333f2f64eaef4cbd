package changes

import (
	"context"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/codegraph"
	"github.com/locus-dev/locus/internal/codegraph/extract"
)

// TestChangedRun: a changed Java body is read by the run of whole
// statements around its changes, found from the tokens of both versions:
// strings, text blocks and comments hide their braces and semicolons, and a
// statement continued on the next line (`else`, an argument list, a lambda)
// stays in one run.
func TestChangedRun(t *testing.T) {
	const head = "class A {\n  void f() {\n" // the body's first line is line 3
	for _, tc := range []struct {
		name, p, t string
		ta, tb     int        // T's changed lines, one hunk
		hunks      []lineHunk // or these
		want       string
	}{
		{"one statement", "    a();\n    b();\n    c();\n", "    a();\n    B();\n    c();\n", 4, 4, nil,
			"{    B();\n}"},
		{"statement over lines", "    a();\n    b(1,\n      2);\n    c();\n", "    a();\n    b(1,\n      3);\n    c();\n", 5, 5, nil,
			"{    b(1,\n      3);\n}"},
		{"else on its own line", "    if (x)\n      a();\n    else\n      b();\n    c();\n", "    if (x)\n      A();\n    else\n      b();\n    c();\n", 4, 4, nil,
			"{\n    if (x)\n      A();\n    else\n      b();\n}"},
		{"braces in strings and comments", "    a(\"}\"); // ;\n    /* } ; */ b();\n    c('{');\n    d();\n", "    a(\"}\"); // ;\n    /* } ; */ B();\n    c('{');\n    d();\n", 4, 4, nil,
			"{    /* } ; */ B();\n}"},
		{"text block", "    String s = \"\"\"\n      { ;\n      \"\"\";\n    b();\n    c();\n", "    String s = \"\"\"\n      { ;\n      \"\"\";\n    B();\n    c();\n", 6, 6, nil,
			"{    B();\n}"},
		{"first statement", "    a();\n    b();\n", "    A();\n    b();\n", 3, 3, nil,
			"{\n    A();\n}"},
		{"inside a lambda", "    a();\n    run(() -> {\n      b();\n    });\n    c();\n", "    a();\n    run(() -> {\n      B();\n    });\n    c();\n", 5, 5, nil,
			"{\n      B();\n    }"},
		{"inside an if", "    if (x) {\n      a();\n      b();\n      c();\n    }\n", "    if (x) {\n      a();\n      B();\n      c();\n    }\n", 5, 5, nil,
			"{      B();\n}"},
		{"inside an else in a loop", "    for (;;) {\n      if (x) a();\n      else {\n        b();\n      }\n    }\n", "    for (;;) {\n      if (x) a();\n      else {\n        B();\n      }\n    }\n", 6, 6, nil,
			"{\n        B();\n      }"},
		{"a block's brace line changed", "    if (x) {\n      a();\n    }\n    b();\n", "    if (y) {\n      a();\n    }\n    b();\n", 3, 3, nil,
			"{\n    if (y) {\n      a();\n    }\n}"},
		{"a switch is no block", "    switch (x) {\n    case 1:\n      a();\n      b();\n    }\n", "    switch (x) {\n    case 1:\n      a();\n      B();\n    }\n", 6, 6, nil,
			"{\n    switch (x) {\n    case 1:\n      a();\n      B();\n    }\n  }"},
		{"in a switch's case block", "    switch (x) {\n    case 1: {\n      a();\n    }\n    }\n    c();\n", "    switch (x) {\n    case 1: {\n      A();\n    }\n    }\n    c();\n", 5, 5, nil,
			"{\n    switch (x) {\n    case 1: {\n      A();\n    }\n    }\n}"},
		{"an array initializer is no block", "    int[] a = {\n      1,\n      2\n    };\n    b();\n", "    int[] a = {\n      1,\n      3\n    };\n    b();\n", 5, 5, nil,
			"{\n    int[] a = {\n      1,\n      3\n    };\n}"},
		{"a block in an array initializer", "    Runnable[] a = {\n      () -> {\n        b();\n      }\n    };\n", "    Runnable[] a = {\n      () -> {\n        B();\n      }\n    };\n", 5, 5, nil,
			"{\n        B();\n      }"},
		{"a bare block after a brace", "    int[] a = {\n      {\n        b();\n      }\n    };\n", "    int[] a = {\n      {\n        B();\n      }\n    };\n", 5, 5, nil,
			"{\n    int[] a = {\n      {\n        B();\n      }\n    };\n  }"},
		{"a local class's body is no block", "    a();\n    new Thread() {\n      int n;\n    };\n", "    a();\n    new Thread() {\n      int m;\n    };\n", 5, 5, nil,
			"{    new Thread() {\n      int m;\n    };\n  }"},
		{"statements removed", "    a();\n    b();\n    c();\n    d();\n", "    a();\n    d();\n", 4, 3, nil,
			"{}"},
		{"unbalanced", "    a();\n    b();\n", "    a(;\n    b();\n", 3, 3, nil,
			""},
		{"two runs", "    a();\n    b();\n    c();\n    d();\n    e();\n", "    a();\n    B();\n    c();\n    D();\n    e();\n", 0, 0,
			[]lineHunk{{4, 4, 4, 4}, {6, 6, 6, 6}}, "{    B();\n    D();\n}"},
		{"two runs, lines added and removed", "    a();\n    b();\n    c();\n    d();\n    e();\n", "    a();\n    b();\n    b2();\n    c();\n    e();\n", 0, 0,
			[]lineHunk{{5, 4, 5, 5}, {6, 6, 7, 6}}, "{    b2();\n}"},
		{"runs joined by a statement over lines", "    a();\n    b(1,\n      2);\n    c();\n", "    a();\n    b(3,\n      4);\n    c();\n", 0, 0,
			[]lineHunk{{4, 4, 4, 4}, {5, 5, 5, 5}}, "{    b(3,\n      4);\n}"},
		{"runs in two blocks", "    if (x) {\n      a();\n    }\n    b();\n    if (y) {\n      c();\n    }\n", "    if (x) {\n      A();\n    }\n    b();\n    if (y) {\n      C();\n    }\n", 0, 0,
			[]lineHunk{{4, 4, 4, 4}, {8, 8, 8, 8}}, "{\n    if (x) {\n      A();\n    }\n    if (y) {\n      C();\n    }\n  }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, tt := head+tc.p+"  }\n}\n", head+tc.t+"  }\n}\n"
			pOb, pCb := strings.Index(p, "f() {")+4, strings.LastIndex(p, "  }\n}")+2
			tOb, tCb := strings.Index(tt, "f() {")+4, strings.LastIndex(tt, "  }\n}")+2
			mb := movedBody{open: point{1, 11}, ob: tOb, cb: tCb}
			hunks := tc.hunks
			if hunks == nil {
				moreP := strings.Count(p, "\n") - strings.Count(tt, "\n")
				hunks = []lineHunk{{pa: tc.ta, pb: tc.tb + moreP, ta: tc.ta, tb: tc.tb}}
			}
			if got := string(changedRuns([]byte(p), pOb, pCb, []byte(tt), mb, hunks, false)); got != tc.want {
				t.Errorf("run %q, want %q", got, tc.want)
			}
		})
	}
}

// TestDeriveByChangedRun: reading only the changed statements gives what a
// whole parse does, also where the change leaves the unchanged statements
// around it unable to stand alone: an `else` whose `if` was replaced, a
// `do` whose `while` was, the rest of a call whose start was.
func TestDeriveByChangedRun(t *testing.T) {
	const head, tail = "class A {\n  int f(int x) {\n", "  }\n\n  int g() {\n    return 1;\n  }\n}\n"
	ifElse := "    int y = 1;\n    if (x > 0)\n      y = 2;\n    else {\n      y = 3;\n    }\n    return y;\n"
	doWhile := "    int y = 1;\n    do\n      y++;\n    while (y < x);\n    return y;\n"
	call := "    int y = 1;\n    y = Math.max(y,\n      x);\n    return y;\n"
	nested := "    int y = 1;\n    if (x > 1) {\n      if (x > 2)\n        y = 2;\n      else {\n        y = 3;\n      }\n      y++;\n    }\n    return y;\n"
	array := "    int[] a = {\n      1\n    };\n    return a[x];\n"
	for _, tc := range []struct {
		name    string
		p, t    string
		deleted []int // P lines
		added   []int // T lines
		how     derivation
	}{
		{"statement changed", ifElse, strings.Replace(ifElse, "y = 1", "y = 2", 1), []int{3}, []int{3}, derivedBodies},
		{"branch changed", ifElse, strings.Replace(ifElse, "y = 2", "y = 4", 1), []int{5}, []int{5}, derivedBodies},
		{"if replaced, else left", ifElse, strings.Replace(ifElse, "if (x > 0)", "y++;", 1), []int{4}, []int{4}, derivedParsed},
		{"while replaced, do left", doWhile, strings.Replace(doWhile, "while (y < x);", "y--;", 1), []int{6}, []int{6}, derivedParsed},
		{"call cut short", call, strings.Replace(call, "Math.max(y,", "Math.abs(y);", 1), []int{4}, []int{4}, derivedParsed},
		{"statement in a block changed", nested, strings.Replace(nested, "y++", "y--", 1), []int{10}, []int{10}, derivedBodies},
		{"if in a block replaced, else left", nested, strings.Replace(nested, "if (x > 2)", "y++;", 1), []int{5}, []int{5}, derivedParsed},
		{"two statements changed", ifElse, strings.Replace(strings.Replace(ifElse, "y = 1", "y = 2", 1), "return y", "return -y", 1), []int{3, 9}, []int{3, 9}, derivedBodies},
		{"if replaced, else left, and another change", ifElse, strings.Replace(strings.Replace(ifElse, "if (x > 0)", "y++;", 1), "return y", "return -y", 1), []int{4, 9}, []int{4, 9}, derivedParsed},
		{"array element made a statement", array, strings.Replace(array, "      1\n", "      a();\n", 1), []int{4}, []int{4}, derivedParsed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkDerive(t, "A.java", []byte(head+tc.p+tail), []byte(head+tc.t+tail), tc.deleted, tc.added, tc.how)
		})
	}
}

// FuzzDeriveJava: a Java file with lines replaced is derived from the file
// before as a whole parse reads it, whatever the lines (runs in blocks, runs
// apart, brackets that do not pair), and deriving never panics.
func FuzzDeriveJava(f *testing.F) {
	base := "class A {\n  int f(int x) {\n    int y = 1;\n    if (x > 1) {\n      y = 2;\n    } else {\n      y = 3;\n    }\n    run(() -> {\n      g(y);\n    });\n    return y;\n  }\n\n  int g(int z,\n        int w) {\n    return z;\n  }\n}\n"
	f.Add(base, 4, 1, "      y = 4;\n", 9, 1, "      g(-y);\n")
	f.Add(base, 2, 1, "    y++;\n", 10, 1, "    return -y;\n")
	f.Add(base, 4, 1, "      y = {;\n", 0, 0, "")
	f.Add(base, 14, 1, "  long g(int z,\n", 0, 0, "")
	f.Add(base, 3, 1, "    int[] a = {\n", 5, 1, "    } else new Object() {\n")
	f.Fuzz(func(t *testing.T, p string, at1, n1 int, with1 string, at2, n2 int, with2 string) {
		if !strings.HasSuffix(p, "\n") {
			p += "\n" // a line appended after a last line without one would join it
		}
		pLines := strings.SplitAfter(p, "\n")
		if len(pLines) > 200 || len(with1)+len(with2) > 400 {
			return
		}
		// Two edits, the second below the first: P's lines [at, at+n)
		// become with's lines.
		if at1 < 0 || n1 < 0 || at2 < at1+n1 || n2 < 0 || at2+n2 > len(pLines) {
			return
		}
		var tt strings.Builder
		var deleted, added []int
		tLine := 1
		edit := func(from, to int, with string) {
			for k := from; k < to; k++ {
				deleted = append(deleted, k+1)
			}
			for _, l := range strings.SplitAfter(with, "\n") {
				if l != "" {
					if !strings.HasSuffix(l, "\n") {
						l += "\n"
					}
					tt.WriteString(l)
					added = append(added, tLine)
					tLine++
				}
			}
		}
		keep := func(from, to int) {
			for _, l := range pLines[from:to] {
				tt.WriteString(l)
				if l != "" {
					tLine++
				}
			}
		}
		keep(0, at1)
		edit(at1, at1+n1, with1)
		keep(at1+n1, at2)
		edit(at2, at2+n2, with2)
		keep(at2+n2, len(pLines))
		if len(deleted) == 0 && len(added) == 0 {
			return
		}
		ctx := context.Background()
		lang := codegraph.LanguageFor("A.java")
		pv := parseSpans(ctx, lang, "A.java", []byte(p))
		if !pv.derivable() {
			return // the mapper parses T whole
		}
		tb := []byte(tt.String())
		got, _ := derive(ctx, lang, "A.java", pv, &textLines{text: []byte(p)}, &textLines{text: tb}, deleted, added)
		if d := parseSpans(ctx, lang, "A.java", tb).diff(got); d != "" {
			t.Errorf("differs from a whole parse: %s\nP:\n%s\nT:\n%s", d, p, tb)
		}
	})
}

// TestDeriveCByChangedRun: a changed C body is read by its changed
// statements, as Java's are, and equals a whole parse; one holding a
// directive is read whole, a run that cannot stand alone is not used, and
// a run opening with a macro call mended line by line reads as in the file.
func TestDeriveCByChangedRun(t *testing.T) {
	const head, tail = "int f(int x) {\n", "}\n\nint g(void) {\n    return 1;\n}\n"
	ifElse := "    int y = 1;\n    if (x > 0)\n        y = 2;\n    else {\n        y = 3;\n    }\n    return y;\n"
	doWhile := "    int y = 1;\n    do\n        y++;\n    while (y < x);\n    return y;\n"
	cond := "    int y = 1;\n#ifdef X\n    y = 2;\n#endif\n    return y;\n"
	macro := "    int y = 1;\n    run_with_period(100) {\n        y = 2;\n    }\n    return y;\n"
	checkDeriveCases(t, "a.c", head+ifElse+tail, []deriveCase{
		{"statement changed", head + strings.Replace(ifElse, "y = 1", "y = 2", 1) + tail, []int{2}, []int{2}, derivedBodies},
		{"if replaced, else left", head + strings.Replace(ifElse, "if (x > 0)", "y++;", 1) + tail, []int{3}, []int{3}, derivedParsed},
	})
	checkDeriveCases(t, "a.c", head+doWhile+tail, []deriveCase{
		{"while replaced, do left", head + strings.Replace(doWhile, "while (y < x);", "y--;", 1) + tail, []int{5}, []int{5}, derivedParsed},
	})
	checkDeriveCases(t, "a.c", head+cond+tail, []deriveCase{
		{"statement beside a directive", head + strings.Replace(cond, "y = 2", "y = 3", 1) + tail, []int{4}, []int{4}, derivedBodies},
	})
	checkDeriveCases(t, "a.c", head+macro+tail, []deriveCase{
		{"statement in a macro's block", head + strings.Replace(macro, "y = 2", "y = 3", 1) + tail, []int{4}, []int{4}, derivedBodies},
	})
	if got := string(changedRunOf(t, "a.c", head+ifElse+tail, head+strings.Replace(ifElse, "return y", "return -y", 1)+tail, 8, 8)); got != "{\n    return -y;\n}" {
		t.Errorf("the run read = %q, want only the changed statement", got)
	}
	if got := string(changedRunOf(t, "a.c", head+cond+tail, head+strings.Replace(cond, "y = 2", "y = 3", 1)+tail, 4, 4)); got != "{\n"+strings.Replace(cond, "y = 2", "y = 3", 1)+"}" {
		t.Errorf("with a directive, the run read = %q, want the whole body", got)
	}
}

// changedRunOf is what changedRuns reads of the first function's body of
// tt, changed from p on T's line ta..tb (one line each side, replaced).
func changedRunOf(t *testing.T, path, p, tt string, ta, tb int) []byte {
	t.Helper()
	ctx := context.Background()
	lang := codegraph.LanguageFor(path)
	pv, tv := parseSpans(ctx, lang, path, []byte(p)), parseSpans(ctx, lang, path, []byte(tt))
	pl, tl := extract.NewLineIndex([]byte(p)), extract.NewLineIndex([]byte(tt))
	f, g := pv.fns[0], tv.fns[0]
	mb := movedBody{open: g.open, close: g.close, ob: offsetAt(tl, g.open), cb: offsetAt(tl, g.close)}
	return changedRuns([]byte(p), offsetAt(pl, f.open), offsetAt(pl, f.close), []byte(tt), mb, []lineHunk{{pa: ta, pb: tb, ta: ta, tb: tb}}, true)
}

// TestDeriveCBraceMacros: a changed body using a macro that stands for
// braces (cBraceMacros) is read with the macro's definition, as the whole
// file reads it.
func TestDeriveCBraceMacros(t *testing.T) {
	const p = "#define chain_else } else\n\nint f(int x) {\n    if (x) {\n        x = 1;\n    chain_else {\n        x = 2;\n    }\n    return x;\n}\n\nint g(void) {\n    return 1;\n}\n"
	checkDeriveCases(t, "a.c", p, []deriveCase{
		{"statement after the macro", strings.Replace(p, "x = 2", "x = 3", 1), []int{7}, []int{7}, derivedBodies},
		{"statement before it", strings.Replace(p, "x = 1", "x = 4", 1), []int{5}, []int{5}, derivedBodies},
	})
}
