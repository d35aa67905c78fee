package client

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/fixtures"
)

const okStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"READY\"}}]}\n\n" +
	"data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}]}\n\n" +
	"data: {\"choices\":[],\"usage\":{\"completion_tokens\":1,\"prompt_tokens\":5}}\n\ndata: [DONE]\n\n"

// TestFreshConnectionPerRequest: llama.cpp closes idle keep-alive
// connections after 5 s and a POST on a stale one is not retried, so every
// request dials anew.
func TestFreshConnectionPerRequest(t *testing.T) {
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, okStream)
	}))
	srv.Start()
	defer srv.Close()
	c := New(Options{BaseURL: srv.URL})
	for range 3 {
		o, _, _ := c.Chat(context.Background(), []byte(`{}`), nil)
		if o.Error != nil || !o.Normal {
			t.Fatalf("outcome %+v", o.Error)
		}
		if _, _, err := c.Get(context.Background(), "/health", time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if len(conns) != 6 {
		t.Errorf("%d connections for 6 requests", len(conns))
	}
}

// TestHeadersAreNotTTFT: a server that sends headers at once and the first
// delta later; TTFT is the delta, measured from dispatch.
func TestHeadersAreNotTTFT(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		time.Sleep(150 * time.Millisecond)
		fmt.Fprint(w, okStream)
	}))
	defer srv.Close()
	o, _, _ := New(Options{BaseURL: srv.URL}).Chat(context.Background(), []byte(`{}`), nil)
	if o.Error != nil || o.TTFT == nil {
		t.Fatalf("%+v", o.Error)
	}
	if *o.TTFT < 0.15 || o.Events[0].Kind != EvHeaders || o.Events[0].T > 0.1 {
		t.Errorf("TTFT %v, events %v", *o.TTFT, o.Events[:2])
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	o, _, _ := New(Options{BaseURL: "http://" + addr}).Chat(context.Background(), []byte(`{}`), nil)
	if o.Error == nil || o.Error.Kind != ErrConnection {
		t.Fatalf("%+v", o.Error)
	}
}

func TestBearerToken(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, okStream)
	}))
	defer srv.Close()
	New(Options{BaseURL: srv.URL, APIKey: "sk-test-123456789"}).Chat(context.Background(), []byte(`{}`), nil)
	if got != "Bearer sk-test-123456789" {
		t.Errorf("Authorization %q", got)
	}
}

func TestBody(t *testing.T) {
	choice := "auto"
	f := &fixtures.Fixture{RequestID: "sanity-T1", Seed: 1, MaxTokens: 2048,
		Messages:   []fixtures.Message{{Role: "user", Content: "[case sanity-T1]\nUse lookup_record to look up record A-17."}},
		Tools:      []byte(`[{"type": "function", "function": {"name": "lookup_record"}}]`),
		ToolChoice: &choice}
	b, err := Body(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages": [{"role":"user","content":"[case sanity-T1]\nUse lookup_record to look up record A-17."}], "stream": true, "stream_options": {"include_usage": true}, "temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.0, "presence_penalty": 0.0, "repetition_penalty": 1.0, "seed": 1, "max_tokens": 2048, "chat_template_kwargs": {"enable_thinking": true, "preserve_thinking": true}, "reasoning_effort": "xhigh", "reasoning_budget_tokens": 0, "tools": [{"type":"function","function":{"name":"lookup_record"}}], "tool_choice": "auto"}`
	if string(b) != want {
		t.Errorf("body\n got %s\nwant %s", b, want)
	}
	f.Tools, f.ToolChoice = []byte("null"), nil
	b, _ = Body(f)
	if strings.Contains(string(b), "tools") || strings.Contains(string(b), "system") {
		t.Errorf("no tools and no system prompt outside T1-T4: %s", b)
	}
}
