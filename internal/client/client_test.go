package client

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
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
