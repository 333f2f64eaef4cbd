package codegraph

import (
	"path"
	"strings"
)

// testDirs are directory names whose code is tests (or their fixtures) in
// the languages locus reads: pytest's testing/, tests/ and test/ of most
// projects, JavaScript's __tests__, Java's src/test, Ruby-style spec/.
var testDirs = map[string]bool{"test": true, "tests": true, "testing": true, "__tests__": true, "spec": true, "specs": true, "testdata": true}

// IsTestPath reports whether the file at path (slash-separated, relative to
// the repository root) is test code by its language's conventions:
//   - any directory named test, tests, testing, __tests__, spec, specs or
//     testdata (Java's src/test/… included);
//   - Python: test_*.py, *_test.py, conftest.py;
//   - Go: *_test.go;
//   - Java: *Test.java, *Tests.java, *IT.java, Test*.java;
//   - JavaScript and TypeScript: *.test.* and *.spec.*;
//   - C and C++: test_*.c*, *_test.c*, *_unittest.c*.
func IsTestPath(p string) bool {
	dir, file := path.Split(p)
	for _, d := range strings.Split(strings.TrimSuffix(dir, "/"), "/") {
		if testDirs[d] {
			return true
		}
	}
	ext := path.Ext(file)
	stem := strings.TrimSuffix(file, ext)
	switch ext {
	case ".py":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || stem == "conftest"
	case ".go":
		return strings.HasSuffix(stem, "_test")
	case ".java":
		return strings.HasSuffix(stem, "Test") || strings.HasSuffix(stem, "Tests") || strings.HasSuffix(stem, "IT") ||
			strings.HasPrefix(stem, "Test") && len(stem) > 4 && stem[4] >= 'A' && stem[4] <= 'Z'
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec")
	case ".c", ".cc", ".cpp", ".cxx", ".h", ".hpp":
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || strings.HasSuffix(stem, "_unittest")
	}
	return false
}

// IsTestID reports whether the graph id (path:qualified.name) names a
// function of test code (see IsTestPath).
func IsTestID(id string) bool {
	p, _, _ := strings.Cut(id, ":")
	return IsTestPath(p)
}
