package badinput

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/locus-dev/locus/internal/rank"
)

// shippedModel is the shipped default model's bytes (a valid model).
func shippedModel(s *sandbox) []byte {
	data, err := os.ReadFile(filepath.Join("..", "rank", "models", "default.json"))
	if err != nil {
		s.t.Fatal(err)
	}
	return data
}

// rankCases are ranking models the learned method cannot rank by.
var rankCases = []badCase{
	{
		name:  "model-truncated",
		input: "`localize --method learned --model M` with M cut in half (a copy that stopped early)",
		want:  "exit 2 before any ranking, naming the file: not a model file (truncated or not JSON)",
		setup: func(s *sandbox) []string {
			data := shippedModel(s)
			path := filepath.Join(s.dir, "half.json")
			if err := os.WriteFile(path, data[:len(data)/2], 0o644); err != nil {
				s.t.Fatal(err)
			}
			return []string{"localize", "--repo", baseRepo, "--method", "learned", "--model", path, "parse the numbers"}
		},
		code:  2,
		names: []string{"half.json", "truncated or not JSON"},
	},
	{
		name:  "model-other-feature-version",
		input: "a model trained by a build whose feature table had another version",
		want:  "exit 2 before any ranking, naming the file and both versions, and saying to train it again",
		setup: func(s *sandbox) []string {
			var f map[string]any
			if err := json.Unmarshal(shippedModel(s), &f); err != nil {
				s.t.Fatal(err)
			}
			f["feature_version"] = rank.FeatureVersion + 1
			data, _ := json.Marshal(f)
			path := filepath.Join(s.dir, "future.json")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				s.t.Fatal(err)
			}
			return []string{"localize", "--repo", baseRepo, "--method", "learned", "--model", path, "parse the numbers"}
		},
		code:  2,
		names: []string{"future.json", "trained on feature version", "locus rank train"},
	},
	{
		name:  "model-dir-without-repo",
		input: "`--model DIR`, a directory of per-repository models that holds none for the repository asked about",
		want:  "exit 1, naming the model file it looked for (DIR/OWNER+NAME.json); no ranking by another repository's model",
		setup: func(s *sandbox) []string {
			dir := filepath.Join(s.dir, "loo")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				s.t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "other+repo.json"), shippedModel(s), 0o644); err != nil {
				s.t.Fatal(err)
			}
			return []string{"localize", "--repo", baseRepo, "--method", "learned", "--model", dir, "parse the numbers"}
		},
		code:  1,
		names: []string{"fixtures+base.json"},
	},
}
