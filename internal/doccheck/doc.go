// Package doccheck holds a test that keeps the repository's documents self-contained.
package doccheck
