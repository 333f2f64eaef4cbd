package blob

import "github.com/locus-dev/locus/internal/blob/driver"

// MaxKeyLen is the longest key, in bytes, that every driver accepts (S3's limit).
const MaxKeyLen = driver.MaxKeyLen

// ValidateKey reports whether key is a portable object key: relative,
// slash-separated, no empty, "." or ".." segments, no backslash, NUL or other
// control characters, valid UTF-8, at most MaxKeyLen bytes. The error wraps
// ErrInvalidKey and quotes the key.
func ValidateKey(key string) error { return driver.ValidateKey(key) }

// ValidatePrefix is ValidateKey for List prefixes, which may also be "" (all
// objects) or end with "/".
func ValidatePrefix(prefix string) error { return driver.ValidatePrefix(prefix) }
