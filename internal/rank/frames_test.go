package rank

import (
	"fmt"
	"strings"
	"testing"
)

func TestStackFrames(t *testing.T) {
	for _, c := range []struct {
		name, trace string
		want        []string // "Class.Func file:line depth"
	}{
		{"python", "Traceback (most recent call last):\n" +
			"  File \"/usr/lib/python3/site-packages/requests/api.py\", line 59, in request\n" +
			"    return session.request(method=method, url=url, **kwargs)\n" +
			"  File \"requests/sessions.py\", line 512, in send\n" +
			"ValueError: bad", []string{".request /usr/lib/python3/site-packages/requests/api.py:59 2", ".send requests/sessions.py:512 1"}},
		{"java", "java.lang.NullPointerException\n\tat com.fasterxml.jackson.core.JsonParser$Feature.enabledIn(JsonParser.java:123)\n" +
			"\tat com.fasterxml.jackson.core.Base.<init>(Base.java:7)", []string{"Feature.enabledIn JsonParser.java:123 1", "Base.<init> Base.java:7 2"}},
		{"javascript", "TypeError: x is undefined\n    at Axios.request (lib/core/Axios.js:40:5)\n    at ./lib/helpers/bind.js:9:15",
			[]string{"Axios.request lib/core/Axios.js:40 1", ". lib/helpers/bind.js:9 2"}},
		{"go", "panic: boom\n\ngoroutine 1 [running]:\ngithub.com/spf13/cobra.(*Command).execute(0xc0000, {0x0})\n" +
			"\t/go/pkg/cobra/command.go:916 +0x862\nmain.main.func1()\n\t/src/main.go:12 +0x1d",
			[]string{"Command.execute /go/pkg/cobra/command.go:916 1", ".main /src/main.go:12 2"}},
		{"rust backtrace", "thread 'main' panicked at src/args.rs:42:9:\nstack backtrace:\n   3: clap::parser::Parser::get_matches_with\n             at ./src/parser/parser.rs:88:5",
			[]string{". src/args.rs:42 1", "Parser.get_matches_with src/parser/parser.rs:88 2"}},
		{"gdb", "#0  0x00005555 in fmt::detail::format_value (out=...) at include/fmt/format.h:1200\n#1  main () at test.cc:5",
			[]string{"detail.format_value include/fmt/format.h:1200 1", ".main test.cc:5 2"}},
		{"prose", "the send method at the adapter fails, see requests/sessions.py", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, f := range StackFrames(c.trace) {
				got = append(got, fmt.Sprintf("%s.%s %s:%d %d", f.Class, f.Func, f.File, f.Line, f.Depth))
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("frames\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

func TestFrameMatch(t *testing.T) {
	frames := []Frame{
		{Func: "send", File: "/venv/lib/requests/sessions.py", Depth: 1},
		{Func: "enabledIn", Class: "Feature", File: "JsonParser.java", Depth: 2},
		{Func: "request", Depth: 3},
	}
	for _, c := range []struct {
		id       string
		file, fn bool
		depth    int
	}{
		{"requests/sessions.py:Session.send", true, true, 1},
		{"requests/sessions.py:Session.close", true, false, 0},
		{"requests/adapters.py:HTTPAdapter.send", false, false, 0}, // the frame names another file
		{"src/main/java/com/x/JsonParser.java:JsonParser.Feature.enabledIn", true, true, 2},
		{"src/main/java/com/x/JsonParser.java:Other.enabledIn", true, false, 0}, // another class
		{"requests/api.py:request", false, true, 3},                             // a frame without a file
		{"other/sessions.py.bak:send", false, false, 0},
	} {
		file, fn, depth := frameMatch(frames, c.id)
		if file != c.file || fn != c.fn || depth != c.depth {
			t.Errorf("%s: file %v func %v depth %d, want %v %v %d", c.id, file, fn, depth, c.file, c.fn, c.depth)
		}
	}
}
