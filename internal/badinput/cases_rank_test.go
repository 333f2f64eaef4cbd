package badinput

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

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
	{
		name:  "rank-train-nothing-to-learn",
		input: "`locus rank train --min-words 1000 DIR`: every mined query is too short to learn from",
		want:  "exit 1: the run fails saying there are no training queries and why (short, unlabelled or instances); no model is published for the fleet",
		setup: func(s *sandbox) []string {
			s.vars["OUT"] = minedTriplets(s)
			return []string{"rank", "train", "--min-words", "1000", "--fleet", "nothing", s.vars["OUT"]}
		},
		code:  1,
		names: []string{"no training queries", "every query was short, unlabelled or an instance"},
		check: func(s *sandbox, r result) {
			if _, err := os.Stat(filepath.Join(s.data, "store", "rank", "models", "nothing")); !os.IsNotExist(err) {
				s.t.Errorf("a failed training run published something for its fleet: %v", err)
			}
		},
	},
	{
		name:  "rank-train-leave-out-stranger",
		input: "`locus rank train --leave-out other/repo DIR`, a repository with no records in the run",
		want:  "exit 1 before any featurising, naming the repository",
		setup: func(s *sandbox) []string {
			return []string{"rank", "train", "--leave-out", "other/repo", minedTriplets(s)}
		},
		code:  1,
		names: []string{"leave out other/repo: no records of it in the run"},
		check: func(s *sandbox, r result) {
			if strings.Contains(r.stderr, "queries done") {
				s.t.Errorf("featurising started:\n%v", r)
			}
		},
	},
	{
		name:  "rank-train-no-records",
		input: "`locus rank train DIR` where DIR's triplets run mined no records (a repository with no fixes in its history)",
		want:  "exit 1 before any workflow starts, naming DIR and saying there is nothing to train on",
		setup: func(s *sandbox) []string {
			out := filepath.Join(s.dir, "trip")
			if r := s.locus("triplets", "--out", out, baseRepo); r.code != 0 {
				s.t.Fatalf("triplets: %v", r)
			}
			s.vars["OUT"] = out
			return []string{"rank", "train", out}
		},
		code:  1,
		names: []string{"{{OUT}} hold no records: nothing to train on"},
	},
	{
		name:  "rank-train-bad-fleet",
		input: "`locus rank train --fleet ../x DIR`, a fleet name that would leave the store's models folder",
		want:  "exit 2 before anything runs, naming the flag and what a fleet name may hold",
		setup: func(s *sandbox) []string {
			return []string{"rank", "train", "--fleet", "../x", s.dir}
		},
		code:  2,
		names: []string{`--fleet "../x"`, "letters, digits"},
	},
}

// minedTriplets indexes a small Python repository with four fixes in its
// history, mines its triplets into a directory and returns it.
func minedTriplets(s *sandbox) string {
	r := s.repo("mined")
	files := map[string]string{
		"pkg/cache.py": "class Cache:\n    def get(self, key):\n        return self.store[key]\n\n    def put(self, key, value):\n        self.store[key] = value\n\n    def evict(self, key):\n        del self.store[key]\n",
		"pkg/queue.py": "class Queue:\n    def push(self, item):\n        self.items.append(item)\n\n    def drain(self):\n        self.items.clear()\n\n    def peek(self):\n        return self.items[0]\n",
		"pkg/keys.py":  "def parse_key(text):\n    return text.strip()\n\ndef key_of(entry):\n    return entry.key\n",
	}
	r.Write(files)
	r.Commit("initial layout")
	for _, e := range []struct{ path, old, new, msg string }{
		{"pkg/cache.py", "return self.store[key]", "return self.store.get(key)", "Cache get returns None for a missing key instead of raising KeyError"},
		{"pkg/queue.py", "return self.items[0]", "return self.items[0] if self.items else None", "Peek on an empty queue returns None"},
		{"pkg/cache.py", "del self.store[key]", "self.store.pop(key, None)", "Evicting a missing key from the cache must not raise"},
	} {
		files[e.path] = strings.Replace(files[e.path], e.old, e.new, 1)
		r.Write(map[string]string{e.path: files[e.path]})
		r.Commit(e.msg)
	}
	if res := s.locus("index", "mined/r="+r.Dir); res.code != 0 {
		s.t.Fatalf("index: %v", res)
	}
	out := filepath.Join(s.dir, "trip")
	if res := s.locus("triplets", "--negatives", "3", "--out", out, "mined/r"); res.code != 0 || !strings.Contains(res.stdout, "3 records") {
		s.t.Fatalf("triplets: %v", res)
	}
	return out
}
