// Package badinput is locus's bad-input suite: it drives the built locus binary with hostile input and checks each case's outcome and the store.
//
// The cases live in the package's tests; docs/reliability.md lists them and is
// generated from them (go test ./internal/badinput -run TestReliabilityDoc -update).
package badinput
