package rank

import "testing"

// TestDefaultModel loads the shipped model: this build's features, a
// manifest saying what it was trained on and how to train it again.
func TestDefaultModel(t *testing.T) {
	m, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	tr := m.File.Trained
	if len(tr.Repos) < 20 || tr.Queries == 0 || tr.Rows == 0 || len(tr.DataSHA256) != 64 || tr.Command == "" {
		t.Errorf("manifest %+v", tr)
	}
	if s := m.Score(make([]float64, len(Features))); s != s {
		t.Error("the default model scores NaN")
	}
}
