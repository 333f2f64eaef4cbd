package codegraph

import "testing"

func TestIsTestPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{"testing/test_assertion.py", true},
		{"src/_pytest/assertion/rewrite.py", false},
		{"tests/test_requests.py", true},
		{"src/requests/models.py", false},
		{"src/flask/testing.py", false}, // a module named testing, not a directory
		{"pkg/conftest.py", true},
		{"pkg/util_test.py", true},
		{"pkg/latest.py", false},
		{"balancer/rls/picker_test.go", true},
		{"balancer/rls/picker.go", false},
		{"internal/testutils/roundrobin.go", false}, // helpers, not tests by name
		{"src/test/java/com/fasterxml/jackson/core/read/NumberParsingTest.java", true},
		{"src/main/java/com/fasterxml/jackson/core/JsonParser.java", false},
		{"src/main/java/com/acme/ParserIT.java", true},
		{"src/main/java/com/acme/TestUtil.java", true},
		{"src/main/java/com/acme/Testament.java", false},
		{"lib/router.test.ts", true},
		{"lib/router.spec.js", true},
		{"lib/__tests__/router.js", true},
		{"lib/router.ts", false},
		{"src/fmt_test.cc", true},
		{"src/format.cc", false},
		{"testdata/fixture.go", true},
		{"README", false},
	} {
		if got := IsTestPath(tc.path); got != tc.want {
			t.Errorf("IsTestPath(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
	if !IsTestID("tests/test_api.py:test_get") || IsTestID("src/api.py:get") {
		t.Error("IsTestID does not follow IsTestPath")
	}
}
