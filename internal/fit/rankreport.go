package fit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"github.com/locus-dev/locus/internal/blob"
	"github.com/locus-dev/locus/internal/plotutil"
	"github.com/locus-dev/locus/schema"
)

// RankerResult is what training a fleet's ranker did: each repository's
// features, the model, the leave-one-repository-out models and their
// validation.
type RankerResult struct {
	Run   string `json:"run"`
	Fleet string `json:"fleet"`
	// Command rebuilds the model (its settings; no paths).
	Command string         `json:"command,omitempty"`
	Repos   []RepoFeatures `json:"repos"`
	Queries int            `json:"queries"` // trained on
	// Reused counts repositories whose stored features were reused.
	Reused int `json:"reused_features,omitempty"`
	// Model is the store key of the fleet's model, LeaveOut each left-out
	// repository's model (once published: schema.RankModelKey).
	Model      string             `json:"model"`
	LeaveOut   map[string]string  `json:"leave_out,omitempty"`
	Importance map[string]float64 `json:"importance"`
	// Validation: each left-out repository's benchmark instances ranked by
	// its model, from the features training computes (the figures of
	// record come from locus eval, through the query path).
	Validation []Validation `json:"validation,omitempty"`
	// Report are the store keys of report.json, report.md and
	// importance.png.
	Report []string `json:"report,omitempty"`
}

// PublishModels makes the models res names (a run's) the fleet's —
// the leave-one-out models first and the fleet's model last, so that a
// reader never pairs a new model with an old report — and stores the
// report beside them. It returns res with the published keys.
func PublishModels(ctx context.Context, b *blob.Bucket, res RankerResult) (RankerResult, error) {
	copyKey := func(from, to string) error {
		data, err := b.ReadAll(ctx, from)
		if err != nil {
			return fmt.Errorf("publish ranker: %w", err)
		}
		return b.WriteAll(ctx, to, data)
	}
	out := res
	out.LeaveOut = map[string]string{}
	for repo, key := range res.LeaveOut {
		to := schema.RankModelKey(res.Fleet, "loo/"+schema.RepoName(repo).FileName()+".json")
		if err := copyKey(key, to); err != nil {
			return res, err
		}
		out.LeaveOut[repo] = to
	}
	out.Model = schema.RankModelKey(res.Fleet, "model.json")
	out.Report = []string{schema.RankModelKey(res.Fleet, "report.json"), schema.RankModelKey(res.Fleet, "report.md"),
		schema.RankModelKey(res.Fleet, "importance.png")}
	js, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return res, err
	}
	var md bytes.Buffer
	out.Markdown(&md)
	png, err := out.importancePlot()
	if err != nil {
		return res, err
	}
	for i, data := range [][]byte{append(js, '\n'), md.Bytes(), png} {
		if err := b.WriteAll(ctx, out.Report[i], data); err != nil {
			return res, fmt.Errorf("publish ranker: %w", err)
		}
	}
	if err := copyKey(res.Model, out.Model); err != nil {
		return res, err
	}
	return out, nil
}

// importance is one feature's importance.
type importance struct {
	Name  string
	Value float64
}

// importances are the model's feature importances, largest first.
func (r RankerResult) importances() []importance {
	var out []importance
	for k, v := range r.Importance {
		out = append(out, importance{k, v})
	}
	slices.SortFunc(out, func(a, b importance) int {
		if c := cmp.Compare(b.Value, a.Value); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Markdown writes the report: the repositories' features, the feature
// importances and the validation table.
func (r RankerResult) Markdown(w io.Writer) {
	fmt.Fprintf(w, "# Learned ranker of fleet %s\n\n", r.Fleet)
	fmt.Fprintf(w, "Run %s: %d training queries from %d repositories; model %s.\n", r.Run, r.Queries, len(r.Repos), r.Model)
	if r.Command != "" {
		fmt.Fprintf(w, "Rebuilt by `%s`.\n", r.Command)
	}
	fmt.Fprintf(w, "\n| repository | records | too short | sampled | unlabelled | instances | candidates | candidate recall | instance recall | failed |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Repos {
		inst := "–"
		if s.Instances > 0 {
			inst = fmt.Sprintf("%.3f", s.InstanceRecall)
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %.0f | %.3f | %s | %d |\n", s.Repo, s.Records, s.Short, s.Sampled, s.Unlabelled,
			s.Instances, s.Candidates, s.CandidateRecall, inst, s.Failed)
	}
	fmt.Fprintf(w, "\nFeature importance (total gain), largest first:\n\n| # | feature | gain |\n|---|---|---|\n")
	for i, e := range r.importances() {
		fmt.Fprintf(w, "| %d | `%s` | %.1f |\n", i+1, e.Name, e.Value)
	}
	if len(r.Validation) == 0 {
		return
	}
	k := r.Validation[0].K
	fmt.Fprintf(w, "\nLeave one repository out, its benchmark instances (training's features), Recall@%d / Acc@%d / MRR:\n\n", k, k)
	fmt.Fprintf(w, "| held out | instances | learned (trees) | linear pairwise | fusion (hybrid's) |\n|---|---|---|---|---|\n")
	three := func(s Scores) string { return fmt.Sprintf("%.3f / %.3f / %.3f", s.Recall, s.Acc, s.MRR) }
	var n int
	var sum [3]Scores
	for _, v := range r.Validation {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s |\n", v.Repo, v.Instances, three(v.Learned), three(v.Linear), three(v.Fused))
		n += v.Instances
		for i, s := range []Scores{v.Learned, v.Linear, v.Fused} {
			f := float64(v.Instances)
			sum[i] = Scores{Recall: sum[i].Recall + f*s.Recall, Acc: sum[i].Acc + f*s.Acc, MRR: sum[i].MRR + f*s.MRR}
		}
	}
	if n > 0 {
		for i := range sum {
			f := float64(n)
			sum[i] = Scores{Recall: sum[i].Recall / f, Acc: sum[i].Acc / f, MRR: sum[i].MRR / f}
		}
		fmt.Fprintf(w, "| **all** | %d | %s | %s | %s |\n", n, three(sum[0]), three(sum[1]), three(sum[2]))
		var cands, recall, r100 float64
		for _, v := range r.Validation {
			f := float64(v.Instances) / float64(n)
			cands, recall, r100 = cands+f*v.Candidates, recall+f*v.CandidateRecall, r100+f*v.Recall100
		}
		fmt.Fprintf(w, "\nCandidate sets of the %d instances: %.0f candidates on average, holding %.3f of the gold functions; the learned order's Recall@100 %.3f.\n", n, cands, recall, r100)
	}
}

// maxImportanceBars is how many features importance.png shows, the most
// important first.
const maxImportanceBars = 20

// importancePlot draws the feature importances as horizontal bars, the
// largest at the top (PNG).
func (r RankerResult) importancePlot() ([]byte, error) {
	p, n, err := r.importanceBars()
	if err != nil {
		return nil, err
	}
	return plotutil.PNG(p, 800, plotutil.HBarsHeight(n))
}

// importanceBars is importancePlot's plot and how many bars it has.
func (r RankerResult) importanceBars() (*plot.Plot, int, error) {
	imp := r.importances()
	title := fmt.Sprintf("Feature importance of fleet %s's ranker: %d features", r.Fleet, len(imp))
	if len(imp) > maxImportanceBars {
		title = fmt.Sprintf("Feature importance of fleet %s's ranker: the %d largest of %d features", r.Fleet, maxImportanceBars, len(imp))
		imp = imp[:maxImportanceBars]
	}
	if len(imp) == 0 {
		// A model whose trees never split: the image says so.
		return plotutil.New(fmt.Sprintf("Feature importance of fleet %s's ranker: none (no tree splits on a feature)", r.Fleet), "", ""), 0, nil
	}
	bars := make([]plotutil.HBar, len(imp))
	for i, e := range imp {
		bars[i] = plotutil.HBar{Name: e.Name, Value: e.Value}
	}
	p, err := plotutil.HBars(title, "total gain (sum over the trees' splits on the feature)", bars, plotutil.Plain{},
		func(v float64) string {
			if v >= 100 {
				return strconv.FormatFloat(v, 'f', 0, 64)
			}
			return strconv.FormatFloat(v, 'g', 3, 64)
		})
	if err != nil {
		return nil, 0, fmt.Errorf("importance plot: %w", err)
	}
	return p, len(bars), nil
}

// ReadRankerReport reads the published report of fleet.
func ReadRankerReport(ctx context.Context, b *blob.Bucket, fleet string) (RankerResult, error) {
	var r RankerResult
	key := schema.RankModelKey(fleet, "report.json")
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		return r, fmt.Errorf("ranker of fleet %s: %w", fleet, err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %v: %w", key, err, blob.ErrCorrupt)
	}
	return r, nil
}

// DownloadModels writes the models and the report res names (published)
// into dir: model.json, loo/OWNER+NAME.json, report.json, report.md and
// importance.png. It returns the files written.
func DownloadModels(ctx context.Context, b *blob.Bucket, res RankerResult, dir string) ([]string, error) {
	keys := map[string]string{res.Model: "model.json"}
	for repo, key := range res.LeaveOut {
		keys[key] = filepath.Join("loo", schema.RepoName(repo).FileName()+".json")
	}
	for _, key := range res.Report {
		keys[key] = path.Base(key)
	}
	var files []string
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		data, err := b.ReadAll(ctx, key)
		if err != nil {
			return files, fmt.Errorf("ranker of fleet %s: %w", res.Fleet, err)
		}
		p := filepath.Join(dir, keys[key])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return files, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return files, err
		}
		files = append(files, p)
	}
	return files, nil
}
