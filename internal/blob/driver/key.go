package driver

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxKeyLen is the longest key, in bytes, that every driver accepts (S3's limit).
const MaxKeyLen = 1024

// ValidateKey reports whether key is a portable object key (rules in package
// blob). Drivers use it to skip stored names that no key could address.
func ValidateKey(key string) error {
	if key == "" {
		return invalidKey(key, "empty key")
	}
	return checkKey(key, key)
}

// ValidatePrefix is ValidateKey for List prefixes, which may also be "" or end with "/".
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	if strings.HasPrefix(prefix, "/") {
		return invalidKey(prefix, "leading \"/\"")
	}
	return checkKey(prefix, strings.TrimSuffix(prefix, "/"))
}

func checkKey(orig, key string) error {
	if len(orig) > MaxKeyLen {
		return invalidKey(orig, fmt.Sprintf("longer than %d bytes", MaxKeyLen))
	}
	if !utf8.ValidString(orig) {
		return invalidKey(orig, "not valid UTF-8")
	}
	for _, r := range orig {
		switch {
		case r == '\\':
			return invalidKey(orig, "contains a backslash")
		case r == 0:
			return invalidKey(orig, "contains NUL")
		// Control characters cannot round-trip through S3's XML listings.
		case r < 0x20 || r == 0x7f:
			return invalidKey(orig, "contains a control character")
		}
	}
	if strings.HasPrefix(key, "/") {
		return invalidKey(orig, "leading \"/\"")
	}
	for seg := range strings.SplitSeq(key, "/") {
		switch seg {
		case "":
			return invalidKey(orig, "empty path segment")
		case ".", "..":
			return invalidKey(orig, fmt.Sprintf("%q segment", seg))
		}
	}
	return nil
}

func invalidKey(key, why string) error {
	return fmt.Errorf("%w %q: %s", ErrInvalidKey, key, why)
}
