package client

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/record"
)

const okStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"READY\"}}]}\n\n" +
	"data: {\"choices\":[{\"finish_reason\":\"stop\",\"index\":0,\"delta\":{}}]}\n\n" +
	"data: {\"choices\":[],\"usage\":{\"completion_tokens\":1,\"prompt_tokens\":5}}\n\ndata: [DONE]\n\n"

// TestFreshConnectionPerRequest: llama.cpp closes idle keep-alive
// connections after 5 s and a POST on a stale one is not retried, so every
// request dials anew.
func TestFreshConnectionPerRequest(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	conns := map[string]bool{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns[r.RemoteAddr] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		serve(t, w, okStream)
	}))
	srv.Start()
	defer srv.Close()
	c := New(Options{BaseURL: srv.URL})
	for range 3 {
		o, _, _ := c.Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
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
// delta later; TTFT is the delta, measured from dispatch. The client's
// clock moves only when the test moves it: the headers are read at 0 s and
// the delta 150 ms of that clock later, whatever the machine's load.
func TestHeadersAreNotTTFT(t *testing.T) {
	t.Parallel()
	clk := &stepClock{now: time.Unix(1_000_000_000, 0)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// The client's next reading after dispatch is its stamp of these
		// headers; the delta is sent once that reading is taken.
		read := clk.nextRead()
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-read
		clk.advance(150 * time.Millisecond)
		serve(t, w, okStream)
	}))
	defer srv.Close()
	o, _, _ := New(Options{BaseURL: srv.URL, Now: clk.Now}).Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
	if o.Error != nil || o.TTFT == nil {
		t.Fatalf("%+v", o.Error)
	}
	if *o.TTFT != 0.15 || o.Events[0].Kind != record.EvHeaders || o.Events[0].T != 0 {
		t.Errorf("TTFT %v, events %v", *o.TTFT, o.Events[:2])
	}
}

// serve writes s as a test server's answer; a write the client did not
// take fails the test.
func serve(t *testing.T, w io.Writer, s string) {
	t.Helper()
	if _, err := io.WriteString(w, s); err != nil {
		t.Errorf("the test server's answer: %v", err)
	}
}

// stepClock is a clock that stands still until advanced; nextRead's
// channel is closed at the first reading after it is asked for.
type stepClock struct {
	mu      sync.Mutex
	now     time.Time
	waiting chan struct{}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waiting != nil {
		close(c.waiting)
		c.waiting = nil
	}
	return c.now
}

func (c *stepClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *stepClock) nextRead() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waiting = make(chan struct{})
	return c.waiting
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	o, _, _ := New(Options{BaseURL: "http://" + addr}).Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
	if o.Error == nil || o.Error.Kind != record.ErrConnection {
		t.Fatalf("%+v", o.Error)
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "text/event-stream")
		serve(t, w, okStream)
	}))
	defer srv.Close()
	New(Options{BaseURL: srv.URL, APIKey: "sk-test-123456789"}).Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
	if got != "Bearer sk-test-123456789" {
		t.Errorf("Authorization %q", got)
	}
}

// TestNeverFollowsRedirects: a 307 to another server (which would get the
// POST body and the key) and a 302 (which would become a GET without a
// body) both fail the request with the status and the Location recorded;
// the other server hears nothing.
func TestNeverFollowsRedirects(t *testing.T) {
	t.Parallel()
	var elsewhere sync.Mutex
	hits := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Lock()
		hits++
		elsewhere.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		serve(t, w, okStream)
	}))
	defer other.Close()
	for _, code := range []int{301, 302, 303, 307, 308} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+r.URL.Path, code)
		}))
		c := New(Options{BaseURL: srv.URL, APIKey: "sk-test-123456789"})
		o, _, _ := c.Chat(context.Background(), dialect.Wire{}, []byte(`{"messages":[]}`), nil)
		if o.Error == nil || o.Error.Kind != record.ErrRedirect || o.HTTPStatus != code || !strings.Contains(o.Error.Message, other.URL) {
			t.Errorf("%d: %+v (status %d)", code, o.Error, o.HTTPStatus)
		}
		if status, _, err := c.Get(context.Background(), "/props", time.Second); err != nil || status != code {
			t.Errorf("%d: GET answered %d, %v", code, status, err)
		}
		srv.Close()
	}
	if hits != 0 {
		t.Errorf("the other server got %d requests", hits)
	}
}

// TestUnaskedContentEncoding: the client asks for no encoding; an answer
// that comes gzip-encoded anyway fails with that reason.
func TestUnaskedContentEncoding(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept-Encoding") != "" {
			t.Errorf("the client asked for %q", r.Header.Get("Accept-Encoding"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Content-Encoding", "gzip")
		// The client reads none of this answer: what it was sent does not
		// matter.
		_, _ = fmt.Fprint(w, okStream)
	}))
	defer srv.Close()
	o, _, _ := New(Options{BaseURL: srv.URL}).Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
	if o.Error == nil || !strings.Contains(o.Error.Message, `Content-Encoding "gzip"`) || o.Normal {
		t.Errorf("%+v", o.Error)
	}
}

// hostile serves a stream built by next(i) until the client goes away.
func hostile(t *testing.T, next func(i int) string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; ; i++ {
			if _, err := fmt.Fprint(w, next(i)); err != nil {
				return
			}
			if i%256 == 0 {
				w.(http.Flusher).Flush()
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestHostileStreamsAreBounded: a stream of data lines that never ends an
// event, one of ten million tiny deltas, and one of endless content each
// fail at their bound with bounded allocation (work that grew faster than
// the stream would show there), and the outcome stays small enough to be
// evidence.
func TestHostileStreamsAreBounded(t *testing.T) {
	t.Parallel()
	line := "data: " + strings.Repeat("x", 1000) + "\n"
	for _, c := range []struct {
		name string
		next func(int) string
		says string
	}{
		{"data lines without a blank line", func(int) string { return line }, "SSE event larger than the limit"},
		{"tiny deltas without end", func(int) string { return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\"}}]}\n\n" }, "more than 65536 events"},
		{"endless content", func(int) string {
			return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("y", 8000) + "\"}}]}\n\n"
		}, "grew past 4194304 bytes"},
		// Arguments a few bytes a delta: appending each to a string copied
		// it every time, quadratic in the stream.
		{"tool-call arguments a few bytes a delta", func(int) string {
			return "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"" + strings.Repeat("z", 60) + "\"}}]}}]}\n\n"
		}, "more than 65536 events"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := hostile(t, c.next)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			o, _, _ := New(Options{BaseURL: srv.URL}).Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
			runtime.ReadMemStats(&after)
			if o.Error == nil || !strings.Contains(o.Error.Message, c.says) || o.Normal {
				t.Fatalf("error %+v", o.Error)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Errorf("allocated %d MiB reading one bounded stream", alloc>>20)
			}
			size := len(o.Answer) + len(o.Reasoning) + len(o.Events)*32
			for _, m := range o.Malformed {
				size += len(m)
			}
			if size > MaxTextBytes+MaxEvents*40 {
				t.Errorf("the outcome holds %d bytes", size)
			}
		})
	}
}

// TestEveryDispatchedRequestEnds: whatever ends a dispatched request (no
// connection, a redirect, an unasked encoding, a status, an answer that
// is not a stream, a cut stream, a normal one), on either wire, its trace
// ends with one end event at its total.
func TestEveryDispatchedRequestEnds(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	ndjson := dialect.Wire{Route: "/api/chat", NDJSON: true}
	const doneLine = `{"message":{"role":"assistant","content":"READY"},"done":true,"done_reason":"stop","eval_count":1}` + "\n"
	for _, c := range []struct {
		name  string
		wire  dialect.Wire
		serve func(w http.ResponseWriter, r *http.Request)
		kind  string // the error's kind, "" for a normal end
	}{
		{"no connection", dialect.Wire{}, nil, record.ErrConnection},
		{"a redirect", dialect.Wire{}, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }, record.ErrRedirect},
		{"an unasked encoding", dialect.Wire{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Header().Set("Content-Encoding", "gzip")
		}, record.ErrMalformed},
		{"a status", dialect.Wire{}, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"error":{"message":"busy"}}`, http.StatusServiceUnavailable)
		}, record.ErrHTTPStatus},
		{"not a stream", dialect.Wire{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			serve(t, w, `{}`)
		}, record.ErrMalformed},
		{"a cut stream", dialect.Wire{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			serve(t, w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"RE\"}}]}\n\n")
		}, record.ErrTruncated},
		{"a normal stream", dialect.Wire{}, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			serve(t, w, okStream)
		}, ""},
		{"not an NDJSON stream", ndjson, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			serve(t, w, okStream)
		}, record.ErrMalformed},
		{"an NDJSON stream cut before its done line", ndjson, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			serve(t, w, `{"message":{"role":"assistant","content":"RE"},"done":false}`+"\n")
		}, record.ErrTruncated},
		{"an error line after the 200", ndjson, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			serve(t, w, `{"error":"an error was encountered while running the model: unexpected EOF"}`+"\n")
		}, record.ErrStreamError},
		{"a normal NDJSON stream", ndjson, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/x-ndjson")
			serve(t, w, doneLine)
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := refused
			if c.serve != nil {
				srv := httptest.NewServer(http.HandlerFunc(c.serve))
				t.Cleanup(srv.Close)
				url = srv.URL
			}
			o, start, end := New(Options{BaseURL: url}).Chat(context.Background(), c.wire, []byte(`{}`), nil)
			kind := ""
			if o.Error != nil {
				kind = o.Error.Kind
			}
			if kind != c.kind || (kind == "") != o.Normal {
				t.Errorf("error %+v, normal %v; want kind %q", o.Error, o.Normal, c.kind)
			}
			ends := 0
			for _, e := range o.Events {
				if e.Kind == record.EvEnd {
					ends++
				}
			}
			if n := len(o.Events); ends != 1 || n == 0 || o.Events[n-1].Kind != record.EvEnd || o.Events[n-1].T != o.Total || end.Before(start) {
				t.Errorf("events %v, total %v, from %v to %v; want one end event, last, at the total", o.Events, o.Total, start, end)
			}
		})
	}
}
