package embed

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
)

// fakeBedrock answers InvokeModel (POST /model/{id}/invoke) for Titan and
// Cohere bodies; fail, when set, answers the first request with that status.
func fakeBedrock(t *testing.T, dim int, fail int) (*bedrockruntime.Client, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		if !strings.HasPrefix(r.URL.Path, "/model/") || !strings.HasSuffix(r.URL.Path, "/invoke") || r.Header.Get("Authorization") == "" {
			http.Error(w, `{"message":"bad request"}`, 400)
			return
		}
		if fail != 0 && k == 1 {
			w.Header().Set("x-amzn-ErrorType", "ThrottlingException")
			w.WriteHeader(fail)
			w.Write([]byte(`{"message":"slow down"}`))
			return
		}
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		vec := func(s string) []float32 {
			v := make([]float32, dim)
			v[len(s)%dim] = 1
			return v
		}
		w.Header().Set("Content-Type", "application/json")
		if texts, ok := body["texts"].([]any); ok {
			var out [][]float32
			for _, x := range texts {
				out = append(out, vec(x.(string)))
			}
			json.NewEncoder(w).Encode(map[string]any{"embeddings": out})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"embedding": vec(body["inputText"].(string)), "inputTextTokenCount": 3})
	}))
	t.Cleanup(srv.Close)
	c := bedrockruntime.New(bedrockruntime.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials:      credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		RetryMaxAttempts: 1,
	})
	return c, &n
}

func TestBedrockTitanAndCohere(t *testing.T) {
	for _, cohere := range []bool{false, true} {
		c, n := fakeBedrock(t, 8, 0)
		b := &Bedrock{Client: c, ModelID: "m", Dims: 8, Cohere: cohere}
		vs, err := b.Embed(context.Background(), []string{"a", "bb", "ccc"})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) != 3 || vs[1][2] != 1 {
			t.Fatalf("cohere=%v: vectors %v", cohere, vs)
		}
		want := int32(3)
		if cohere {
			want = 1
		}
		if n.Load() != want {
			t.Errorf("cohere=%v: %d requests, want %d", cohere, n.Load(), want)
		}
	}
}

func TestBedrockThrottlingIsRetryable(t *testing.T) {
	c, n := fakeBedrock(t, 4, 429)
	var waits []int
	b := &Batched{E: &Bedrock{Client: c, ModelID: "m", Dims: 4}, Opts: BatchOptions{Sleep: func(context.Context, time.Duration) error {
		waits = append(waits, 1)
		return nil
	}}}
	if _, err := b.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 2 || len(waits) != 1 {
		t.Fatalf("%d requests, %d waits; want a retry after the 429", n.Load(), len(waits))
	}
	c2, _ := fakeBedrock(t, 4, 400)
	if _, err := (&Bedrock{Client: c2, ModelID: "m", Dims: 4}).Embed(context.Background(), []string{"x"}); IsRetryable(err) || err == nil {
		t.Fatalf("a 400 must not be retryable: %v", err)
	}
}
