package benchmark

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/locus-dev/locus/internal/embed/onnx"
	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
)

func TestEmbed(t *testing.T) {
	if err := onnx.Available(""); err != nil {
		t.Skipf("%v", err) // CI installs the runtime and fails this skip
	}
	gitDir, head := fixture(t)
	model := t.TempDir()
	if err := onnxtest.WriteBERT(model, onnxtest.BERTConfig{Hidden: 16, Heads: 2, Layers: 1}); err != nil {
		t.Fatal(err)
	}
	res, err := Embed(context.Background(), EmbedOptions{GitDir: gitDir, Head: head, Model: model, Tokens: []int{16, 8}, Functions: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Functions != 3 || len(res.Runs) != 3 {
		t.Fatalf("functions %d, runs %d; want 3 functions, 3 runs (lexical, 16, 8 tokens)", res.Functions, len(res.Runs))
	}
	for i, r := range res.Runs {
		if r.Texts != 2 || r.Seconds <= 0 || r.PerSecond <= 0 || r.Ratio <= 0 {
			t.Errorf("run %d: %+v", i, r)
		}
	}
	// The documents are longer than 8 tokens: both are cut, and the mean is the limit.
	if r := res.Runs[2]; r.MaxTokens != 8 || r.Truncated != 2 || r.MeanTokens != 8 {
		t.Errorf("8-token run: %+v; want both texts cut to 8 tokens", r)
	}
	var out bytes.Buffer
	if err := WriteEmbedTable(&out, res); err != nil || !strings.Contains(out.String(), "FUNCTIONS/S") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	if _, err := Embed(context.Background(), EmbedOptions{GitDir: gitDir, Head: head, Model: t.TempDir()}); err == nil {
		t.Error("an empty model directory: no error")
	}
}
