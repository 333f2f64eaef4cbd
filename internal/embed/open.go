package embed

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
)

// Open returns the embedder a URL names, wrapped in Batched (batching,
// bounded concurrency, retries, 413 splitting):
//
//	"" or lexical[://?dim=512]            the local lexical embedder (no model)
//	openai://host[:port]?model=M&dim=D    OpenAI-compatible /v1/embeddings over https
//	openai+http://host:port?model=M&dim=D the same over http (vLLM, Infinity, TEI)
//	tei://host:port?model=M&dim=D         TEI's /embed over http
//	bedrock://MODEL-ID?dim=D&region=R[&cohere=1]  Amazon Bedrock InvokeModel
//	onnx:///MODEL-DIR?pool=mean&max_tokens=256   a local encoder on the CPU (ONNX Runtime;
//	                                      batch, threads, lib: see package onnx)
//	onnx://hf/ORG/NAME[?revision=R&…]     the same, downloaded once from the Hugging Face hub
//	                                      into ModelDir ($LOCUS_HF_ENDPOINT: another hub;
//	                                      HF_HUB_OFFLINE=1: the cache only, never the hub)
//	use-lite://[?dir=DIR&node=PATH&procs=N] Universal Sentence Encoder lite in Node sidecars
//	                                      (tools/install-use-lite.sh)
//
// Common parameters: batch (texts per request, default 32), concurrency
// (default 4), max_chars (default 8192). The API key comes from
// $LOCUS_EMBED_API_KEY, never from the URL.
func Open(ctx context.Context, raw string) (Embedder, error) {
	if raw == "" || raw == "lexical" {
		return &Lexical{}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("embedder URL %q: %w", raw, err)
	}
	q := u.Query()
	num := func(name string, def int) (int, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("embedder URL %q: %s=%q: want a positive integer", raw, name, v)
		}
		return n, nil
	}
	dim, err := num("dim", 0)
	if err != nil {
		return nil, err
	}
	if u.Scheme == "onnx" {
		e, err := openONNX(ctx, raw, u, dim)
		if err != nil {
			return nil, err
		}
		// One run at a time (the runtime uses every core itself); requests
		// of 64 texts leave the model room to batch texts of like length.
		return &Batched{E: e, Opts: BatchOptions{MaxTexts: 64, Concurrency: 1}}, nil
	}
	if u.Scheme == "use-lite" {
		procs, err := num("procs", DefaultUseLiteProcs())
		if err != nil {
			return nil, err
		}
		e, err := openUseLite(ctx, raw, u, dim, procs)
		if err != nil {
			return nil, err
		}
		return &Batched{E: e, Opts: BatchOptions{MaxTexts: 32, Concurrency: e.Size()}}, nil
	}
	if u.Scheme == "lexical" {
		if dim == 0 {
			dim = 512
		}
		return &Lexical{Dims: dim}, nil
	}
	if dim == 0 {
		return nil, fmt.Errorf("embedder URL %q: dim is required (the model's output size)", raw)
	}
	model := q.Get("model")
	var e Embedder
	switch u.Scheme {
	case "openai", "openai+http", "tei":
		if model == "" {
			return nil, fmt.Errorf("embedder URL %q: model is required", raw)
		}
		scheme := "https"
		if u.Scheme != "openai" {
			scheme = "http"
		}
		o := HTTPOptions{BaseURL: scheme + "://" + u.Host + u.Path, Model: model, Dim: dim, APIKey: os.Getenv("LOCUS_EMBED_API_KEY")}
		if u.Scheme == "tei" {
			e = &TEI{o}
		} else {
			e = &OpenAI{o}
		}
	case "bedrock":
		var opts []func(*config.LoadOptions) error
		if r := q.Get("region"); r != "" {
			opts = append(opts, config.WithRegion(r))
		}
		ac, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("embedder URL %q: %w", raw, err)
		}
		client := bedrockruntime.NewFromConfig(ac, func(o *bedrockruntime.Options) {
			if ep := q.Get("endpoint"); ep != "" {
				o.BaseEndpoint = aws.String(ep)
			}
			o.RetryMaxAttempts = 1
		})
		e = &Bedrock{Client: client, ModelID: u.Host + u.Path, Dims: dim, Cohere: q.Get("cohere") == "1"}
	default:
		return nil, fmt.Errorf("embedder URL %q: unsupported scheme (want lexical, onnx, use-lite, openai, openai+http, tei or bedrock)", raw)
	}
	batch, err := num("batch", 32)
	if err != nil {
		return nil, err
	}
	conc, err := num("concurrency", 4)
	if err != nil {
		return nil, err
	}
	maxc, err := num("max_chars", 8192)
	if err != nil {
		return nil, err
	}
	return &Batched{E: e, Opts: BatchOptions{MaxTexts: batch, Concurrency: conc, MaxChars: maxc}}, nil
}
