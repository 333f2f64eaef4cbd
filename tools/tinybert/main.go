// Command tinybert writes a BERT encoder with deterministic random weights
// (model.onnx and BERT's uncased vocab.txt) for `--embedder onnx:///DIR`:
// the model the tests and `locus-dev bench embed` use, for measuring speed
// where real weights cannot be had. Its vectors mean nothing.
//
//	go run ./tools/tinybert -out DIR [-shape tiny|minilm-l6] [-int8]
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/locus-dev/locus/internal/embed/onnx/onnxtest"
)

func main() {
	out := flag.String("out", "", "directory to write model.onnx and vocab.txt into (required)")
	shape := flag.String("shape", "minilm-l6", "tiny (2 layers, 32 wide, as the tests) or minilm-l6 (all-MiniLM-L6-v2's shape)")
	int8 := flag.Bool("int8", false, "int8 weights (dynamic quantization's layout)")
	flag.Parse()
	var c onnxtest.BERTConfig
	switch *shape {
	case "tiny":
	case "minilm-l6":
		c = onnxtest.MiniLML6
	default:
		fmt.Fprintf(os.Stderr, "tinybert: -shape %q: want tiny or minilm-l6\n", *shape)
		os.Exit(2)
	}
	if *out == "" {
		fmt.Fprintln(os.Stderr, "tinybert: -out DIR is required")
		os.Exit(2)
	}
	c.Int8 = *int8
	if err := onnxtest.WriteBERT(*out, c); err != nil {
		fmt.Fprintf(os.Stderr, "tinybert: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("wrote %s/model.onnx and vocab.txt\n", *out)
}
