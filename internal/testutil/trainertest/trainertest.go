// Package trainertest gates tests on a trainer: a Python with the libraries
// locus trains models with (XGBoost; PyTorch and ONNX for the
// cross-encoder).
package trainertest

import (
	"os"
	"testing"
)

// Env, when set (CI sets it), makes a test whose trainer is missing fail
// instead of skipping: there a missing trainer is a broken setup.
const Env = "LOCUS_REQUIRE_TRAINER"

// Need returns the interpreter find finds. When find fails, t fails under
// Env and is skipped elsewhere.
func Need(t testing.TB, find func() (string, error)) string {
	t.Helper()
	py, err := find()
	if err != nil {
		if os.Getenv(Env) != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return py
}
