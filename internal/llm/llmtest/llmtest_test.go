package llmtest

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func post(t *testing.T, url string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

func TestProtocolChecks(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply("kept for the valid request"))
	anth := s.URL + PathAnthropic
	v := map[string]string{"anthropic-version": "2023-06-01"}
	cases := []struct {
		name   string
		url    string
		header map[string]string
		body   string
		want   int
	}{
		{"not json", s.URL + PathOpenAI, nil, `{`, 400},
		{"no model", s.URL + PathOpenAI, nil, `{"messages":[{"role":"user","content":"x"}]}`, 400},
		{"no messages", s.URL + PathOpenAI, nil, `{"model":"m","messages":[]}`, 400},
		{"anthropic no version", anth, nil, `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`, 400},
		{"anthropic no max_tokens", anth, v, `{"model":"m","messages":[{"role":"user","content":"x"}]}`, 400},
		{"anthropic system role", anth, v, `{"model":"m","max_tokens":5,"messages":[{"role":"system","content":"x"}]}`, 400},
		{"unknown path", s.URL + "/v1/embeddings", nil, `{}`, 404},
		{"anthropic ok", anth, v, `{"model":"m","max_tokens":5,"system":"s","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`, 200},
	}
	for _, tc := range cases {
		code, body := post(t, tc.url, tc.header, tc.body)
		if code != tc.want {
			t.Errorf("%s: status %d, want %d (%v)", tc.name, code, tc.want, body)
		}
		if tc.url == anth && code == 400 && body["type"] != "error" {
			t.Errorf("%s: anthropic error body %v", tc.name, body)
		}
	}
	// Rejected requests consume no step; the valid one took the queued reply.
	last := s.Requests()[len(s.Requests())-1]
	if last.Step.Text != "kept for the valid request" || last.System != "s" || last.Prompt() != "hi" || s.Pending() != 0 {
		t.Errorf("last request %+v, pending %d", last, s.Pending())
	}
	if s.Count(PathOpenAI) != 3 || s.Count(PathAnthropic) != 4 || s.Count("/v1/embeddings") != 1 || s.Total() != 8 {
		t.Errorf("counts %v", s.Counts())
	}
}

func TestQueueOrder(t *testing.T) {
	s := NewServer(t)
	s.Enqueue(Reply("shared-1"), Reply("shared-2"))
	s.EnqueuePath(PathAnthropic, Reply("anthropic-only"))
	s.SetHandler(func(Request) Step { return Reply("handler") })
	body := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}`
	v := map[string]string{"anthropic-version": "2023-06-01"}
	var got []string
	for _, u := range []string{PathOpenAI, PathAnthropic, PathAnthropic, PathOpenAI, PathOpenAI} {
		post(t, s.URL+u, v, body)
		r := s.Requests()
		got = append(got, r[len(r)-1].Step.Text)
	}
	want := []string{"shared-1", "anthropic-only", "shared-2", "handler", "handler"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("answers %v, want %v", got, want)
	}
}

func TestParseSelectionPrompt(t *testing.T) {
	prompt := "## Issue\nx\n\n## Center: a.py:f\n````\n```\n### not.py:real\n```\n````\n\n## Candidates\n### a.py:g\n```\ncode\n```\n\n### b.py:h\n```\n```\n"
	got := ParseSelectionPrompt(prompt)
	want := SelectionPrompt{Center: "a.py:f", Candidates: []string{"a.py:g", "b.py:h"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
