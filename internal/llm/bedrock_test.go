package llm

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
)

func TestBedrockConverse(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		if !strings.HasSuffix(r.URL.Path, "/converse") || r.Header.Get("Authorization") == "" {
			http.Error(w, `{"message":"bad"}`, 400)
			return
		}
		if k == 1 {
			w.Header().Set("x-amzn-ErrorType", "ThrottlingException")
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			w.Write([]byte(`{"message":"Too many requests"}`))
			return
		}
		var body struct {
			System   []map[string]string `json:"system"`
			Messages []struct {
				Role    string              `json:"role"`
				Content []map[string]string `json:"content"`
			} `json:"messages"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		if len(body.System) != 1 || body.System[0]["text"] != "be brief" || body.Messages[0].Content[0]["text"] != "hello" {
			http.Error(w, `{"message":"unexpected request"}`, 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"output":{"message":{"role":"assistant","content":[{"text":"{\"ids\": [\"a\"]}"}]}},"stopReason":"end_turn","usage":{"inputTokens":11,"outputTokens":5,"totalTokens":16}}`))
	}))
	defer srv.Close()
	c := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), RetryMaxAttempts: 1})
	b, err := NewBedrock(context.Background(), BedrockConfig{ModelID: "anthropic.claude", Client: c})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{System: "be brief", Messages: []Message{{Role: "user", Content: "hello"}}}
	_, err = b.Complete(context.Background(), req)
	if !IsRetryable(err) || RetryAfter(err).Seconds() != 7 {
		t.Fatalf("throttling: err %v retryable %v after %v", err, IsRetryable(err), RetryAfter(err))
	}
	resp, err := b.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"ids": ["a"]}` || resp.PromptTokens != 11 || resp.CompletionTokens != 5 || resp.StopReason != "end_turn" {
		t.Fatalf("response %+v", resp)
	}
}
