package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

// BedrockConfig configures the Bedrock Converse client.
type BedrockConfig struct {
	// ModelID, e.g. anthropic.claude-sonnet-4-20250514-v1:0; required.
	ModelID string
	// Region; default from the AWS configuration (AWS_REGION).
	Region string
	// Endpoint overrides the service endpoint (tests, VPC endpoints).
	Endpoint string
	// MaxTokens per answer; default 1024.
	MaxTokens int
	// Client overrides the SDK client (tests).
	Client *bedrockruntime.Client
}

// Bedrock talks to Amazon Bedrock's Converse API with the default AWS
// credential chain.
type Bedrock struct {
	cfg    BedrockConfig
	client *bedrockruntime.Client
}

// NewBedrock returns a Converse client.
func NewBedrock(ctx context.Context, cfg BedrockConfig) (*Bedrock, error) {
	if cfg.ModelID == "" {
		return nil, errors.New("llm bedrock: model id is required")
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 1024
	}
	c := cfg.Client
	if c == nil {
		var opts []func(*config.LoadOptions) error
		if cfg.Region != "" {
			opts = append(opts, config.WithRegion(cfg.Region))
		}
		ac, err := config.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return nil, fmt.Errorf("llm bedrock: %w", err)
		}
		c = bedrockruntime.NewFromConfig(ac, func(o *bedrockruntime.Options) {
			if cfg.Endpoint != "" {
				o.BaseEndpoint = aws.String(cfg.Endpoint)
			}
			o.RetryMaxAttempts = 1 // Temporal retries, with backoff and Retry-After
		})
	}
	return &Bedrock{cfg: cfg, client: c}, nil
}

// Name is the model id.
func (b *Bedrock) Name() string { return b.cfg.ModelID }

// Complete implements Chat.
func (b *Bedrock) Complete(ctx context.Context, req Request) (Response, error) {
	in := &bedrockruntime.ConverseInput{ModelId: aws.String(b.cfg.ModelID)}
	if req.System != "" {
		in.System = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: req.System}}
	}
	for _, m := range req.Messages {
		if m.Role == "system" {
			in.System = append(in.System, &types.SystemContentBlockMemberText{Value: m.Content})
			continue
		}
		role := types.ConversationRoleUser
		if m.Role == "assistant" {
			role = types.ConversationRoleAssistant
		}
		in.Messages = append(in.Messages, types.Message{Role: role, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: m.Content}}})
	}
	maxTok := req.MaxTokens
	if maxTok <= 0 {
		maxTok = b.cfg.MaxTokens
	}
	in.InferenceConfig = &types.InferenceConfiguration{MaxTokens: aws.Int32(int32(maxTok)), Temperature: aws.Float32(float32(req.Temperature))}
	out, err := b.client.Converse(ctx, in)
	if err != nil {
		return Response{}, b.classify(err)
	}
	var resp Response
	resp.Model = b.cfg.ModelID
	resp.StopReason = string(out.StopReason)
	if msg, ok := out.Output.(*types.ConverseOutputMemberMessage); ok {
		for _, c := range msg.Value.Content {
			if t, ok := c.(*types.ContentBlockMemberText); ok {
				resp.Text += t.Value
			}
		}
	} else {
		return Response{}, &Error{Provider: "bedrock", Model: b.cfg.ModelID, Msg: "response has no message", Retryable: true}
	}
	if out.Usage != nil {
		resp.PromptTokens = int(aws.ToInt32(out.Usage.InputTokens))
		resp.CompletionTokens = int(aws.ToInt32(out.Usage.OutputTokens))
	}
	return resp, nil
}

func (b *Bedrock) classify(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	e := &Error{Provider: "bedrock", Model: b.cfg.ModelID, Msg: err.Error(), Err: err}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		e.Status = re.HTTPStatusCode()
		if re.Response != nil {
			if d, ok := ParseRetryAfter(re.Response.Header.Get("Retry-After"), time.Now()); ok {
				e.RetryAfter = d
			}
		}
		e.Retryable = e.Status == 408 || e.Status == 429 || e.Status >= 500
		return e
	}
	e.Retryable = true // no response: transport failure or timeout
	return e
}
