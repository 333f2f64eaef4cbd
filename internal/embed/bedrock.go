package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
)

// Bedrock embeds with Amazon Bedrock's InvokeModel: Titan text embeddings
// (one text per call) or Cohere embed models (batches).
type Bedrock struct {
	Client *bedrockruntime.Client
	// ModelID, e.g. amazon.titan-embed-text-v2:0 or cohere.embed-english-v3.
	ModelID string
	Dims    int
	// Cohere selects the Cohere request body; default: Titan.
	Cohere bool
	// InputType for Cohere: search_document (default) or search_query.
	InputType string
}

// Name is the model id.
func (b *Bedrock) Name() string { return b.ModelID }

// Dim is the configured dimension.
func (b *Bedrock) Dim() int { return b.Dims }

// Endpoint names the model as errors name it: bedrock://MODEL-ID.
func (b *Bedrock) Endpoint() string { return "bedrock://" + b.ModelID }

// Embed implements Embedder.
func (b *Bedrock) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if b.Cohere {
		it := b.InputType
		if it == "" {
			it = "search_document"
		}
		var out struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := b.invoke(ctx, map[string]any{"texts": texts, "input_type": it, "truncate": "END"}, &out); err != nil {
			return nil, err
		}
		if err := checkDims(out.Embeddings, len(texts), b.Dims); err != nil {
			return nil, atURL(err, b.Endpoint())
		}
		return out.Embeddings, nil
	}
	vecs := make([][]float32, len(texts))
	for i, t := range texts {
		var out struct {
			Embedding []float32 `json:"embedding"`
		}
		if err := b.invoke(ctx, map[string]any{"inputText": t, "dimensions": b.Dims, "normalize": true}, &out); err != nil {
			return nil, err
		}
		vecs[i] = out.Embedding
	}
	if err := checkDims(vecs, len(texts), b.Dims); err != nil {
		return nil, atURL(err, b.Endpoint())
	}
	return vecs, nil
}

func (b *Bedrock) invoke(ctx context.Context, body any, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	resp, err := b.Client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{
		ModelId: aws.String(b.ModelID), Body: data,
		ContentType: aws.String("application/json"), Accept: aws.String("application/json"),
	})
	if err != nil {
		return classifyAWS(b.ModelID, err)
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return &Error{URL: b.Endpoint(), Msg: fmt.Sprintf("malformed response body (%v): %s", err, snippet(resp.Body)), Retryable: true}
	}
	return nil
}

// classifyAWS maps an AWS SDK failure onto Error: throttling and 5xx retry,
// 413 splits, other 4xx do not retry.
func classifyAWS(model string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		st := re.HTTPStatusCode()
		e := &Error{URL: "bedrock://" + model, Status: st, Msg: err.Error()}
		if re.Response != nil {
			e.RetryAfter = parseRetryAfter(re.Response.Header.Get("Retry-After"), time.Now())
		}
		switch {
		case st == 413:
			e.TooLarge = true
		case st == 429 || st >= 500:
			e.Retryable = true
		}
		return e
	}
	return &Error{URL: "bedrock://" + model, Msg: err.Error(), Retryable: true}
}
