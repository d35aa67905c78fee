package client

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/record"
)

func replayNDJSON(t *testing.T, body []byte) *record.Outcome {
	t.Helper()
	o := &record.Outcome{}
	if err := readNDJSON(bytes.NewReader(body), o, fakeClock(), nil, nil); err != nil {
		t.Fatal(err)
	}
	return o
}

func ollamaCapture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ollama", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOllamaCaptures reads real /api/chat streams of Ollama 0.32.11: the
// thinking and content lines, the done line's done_reason kept as the
// finish reason and its counts and durations as the timings (without its
// message), the tool call that arrives whole on the done line with
// done_reason "stop", the cap reached while thinking, and an error line
// after the answer began.
func TestOllamaCaptures(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, finish, errKind, first, answer, reasoning, call, timings string
		normal                                                         bool
	}{
		{name: "chat-think-max.ndjson", finish: "stop", first: record.EvReasoning, answer: "READY", reasoning: "Checking records", normal: true,
			timings: `{"model":"tiny-qwen3-thinker","created_at":"2026-12-06T06:32:12.820684993Z","done":true,"done_reason":"stop","total_duration":1897564111,"load_duration":1221566342,"prompt_eval_count":14,"prompt_eval_duration":2915000,"eval_count":7,"eval_duration":666165000}`},
		{name: "chat-tools.ndjson", finish: "stop", first: record.EvReasoning, reasoning: "Looking up the record", call: `lookup_record {"id":"A-17"}`, normal: true},
		{name: "chat-num-predict-3.ndjson", finish: "length", first: record.EvReasoning, reasoning: "Checking records", normal: true},
		{name: "chat-midstream-kill.ndjson", errKind: record.ErrStreamError, first: record.EvAnswer, answer: "<tool_call>\n<think>"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := replayNDJSON(t, ollamaCapture(t, c.name))
			switch {
			case c.errKind == "" && o.Error != nil:
				t.Fatalf("error %+v", o.Error)
			case c.errKind != "" && (o.Error == nil || o.Error.Kind != c.errKind):
				t.Fatalf("error %+v, want %s", o.Error, c.errKind)
			}
			if o.Normal != c.normal || o.Finish() != c.finish || o.FirstDeltaKind != c.first || o.Answer != c.answer || o.Reasoning != c.reasoning {
				t.Errorf("normal %v, finish %q, first %q, answer %q, reasoning %q", o.Normal, o.Finish(), o.FirstDeltaKind, o.Answer, o.Reasoning)
			}
			call := ""
			for _, tc := range o.ToolCalls {
				call += tc.Name + " " + tc.Arguments
			}
			if call != c.call {
				t.Errorf("tool calls %q, want %q", call, c.call)
			}
			if c.timings != "" && string(o.Timings) != c.timings {
				t.Errorf("timings\n got %s\nwant %s", o.Timings, c.timings)
			}
			if c.normal && (!json.Valid(o.Timings) || bytes.Contains(o.Timings, []byte(`"message"`)) || o.Usage != nil) {
				t.Errorf("timings %s, usage %s", o.Timings, o.Usage)
			}
			if c.call != "" && (o.FirstAnswer == nil || *o.FirstAnswer <= *o.TTFT) {
				t.Errorf("the call is the first answer: ttft %v, first answer %v", o.TTFT, o.FirstAnswer)
			}
		})
	}
	o := replayNDJSON(t, ollamaCapture(t, "chat-midstream-kill.ndjson"))
	if !strings.Contains(o.Error.Message, "an error was encountered while running the model: unexpected EOF") || strings.HasPrefix(o.Error.Message, `"`) {
		t.Errorf("error message %q", o.Error.Message)
	}
}

// TestOllamaStreamEnds: only the done line ends a stream normally (the
// spec's "require a normal stream end and finish reason"); a stream cut
// before it, a line after it, a line that is not JSON, duplicate names, a
// done line without done_reason or with one that is neither stop nor
// length, and a line past the bound are failures of their own kinds.
func TestOllamaStreamEnds(t *testing.T) {
	t.Parallel()
	const think = `{"model":"m","created_at":"t","message":{"role":"assistant","content":"","thinking":"Checking"},"done":false}` + "\n"
	const done = `{"model":"m","created_at":"t","message":{"role":"assistant","content":""},"done":true,"done_reason":"stop","prompt_eval_count":14,"prompt_eval_duration":2915000,"eval_count":7,"eval_duration":666165000}` + "\n"
	for _, c := range []struct {
		name, body, kind string
	}{
		{"cut before the done line", think, record.ErrTruncated},
		{"nothing at all", "", record.ErrTruncated},
		{"a line after the done line", think + done + think, record.ErrAfterDone},
		{"not JSON", think + "{\"model\":\n" + done, record.ErrMalformed},
		{"duplicate names", `{"done":false,"done":true}` + "\n" + done, record.ErrMalformed},
		{"no done_reason", strings.Replace(done, `"done_reason":"stop",`, "", 1), record.ErrNoFinish},
		{"done_reason load", strings.Replace(done, `"stop"`, `"load"`, 1), record.ErrFinishReason},
		{"a line past the bound", `{"message":{"content":"` + strings.Repeat("x", 2<<20) + `"}}` + "\n" + done, record.ErrLimit},
		{"blank lines are no lines", think + "\n\n" + done, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := replayNDJSON(t, []byte(c.body))
			switch {
			case c.kind == "" && (o.Error != nil || !o.Normal):
				t.Errorf("error %+v, normal %v", o.Error, o.Normal)
			case c.kind != "" && (o.Error == nil || o.Error.Kind != c.kind || o.Normal && c.kind != record.ErrFinishReason):
				t.Errorf("error %+v, normal %v; want %s", o.Error, o.Normal, c.kind)
			}
		})
	}
}

// TestChatOnOllamaWire: Chat POSTs the body to the dialect's route with
// its Accept, reads application/x-ndjson, and refuses another type; an
// HTTP error before the stream is the status's failure, as on the SSE
// wire.
func TestChatOnOllamaWire(t *testing.T) {
	t.Parallel()
	wire := dialect.Wire{Route: "/api/chat", NDJSON: true}
	var path, accept, body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		path, accept, body = r.URL.Path, r.Header.Get("Accept"), string(b)
		switch r.URL.Query().Get("as") {
		case "sse":
			w.Header().Set("Content-Type", "text/event-stream")
		case "404":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error":"model 'nope' not found"}`) // the client's reading is under test, not this write
			return
		default:
			w.Header().Set("Content-Type", "application/x-ndjson")
		}
		_, _ = w.Write(ollamaCapture(t, "chat-think-max.ndjson")) // as above
	}))
	t.Cleanup(srv.Close)
	o, _, _ := New(Options{BaseURL: srv.URL}).Chat(context.Background(), wire, []byte(`{"model":"m"}`), nil)
	if o.Error != nil || !o.Normal || o.Answer != "READY" || path != "/api/chat" || accept != "application/x-ndjson" || body != `{"model":"m"}` {
		t.Errorf("outcome %+v; %s %s %s", o, path, accept, body)
	}
	wire.Route = "/api/chat?as=sse"
	if o, _, _ := New(Options{BaseURL: srv.URL}).Chat(context.Background(), wire, []byte(`{}`), nil); o.Error == nil || o.Error.Kind != record.ErrMalformed ||
		!strings.Contains(o.Error.Message, `expected a application/x-ndjson answer, got Content-Type "text/event-stream"`) {
		t.Errorf("an SSE answer on the NDJSON wire: %+v", o.Error)
	}
	wire.Route = "/api/chat?as=404"
	if o, _, _ := New(Options{BaseURL: srv.URL}).Chat(context.Background(), wire, []byte(`{}`), nil); o.Error == nil || o.Error.Kind != record.ErrHTTPStatus || !strings.Contains(o.Error.Message, "HTTP 404") {
		t.Errorf("an HTTP 404: %+v", o.Error)
	}
}

// FuzzReadNDJSON: whatever an Ollama-shaped stream holds, reading it ends
// without a panic, and a normal end has a finish reason and fails only for
// one outside the protocol's.
func FuzzReadNDJSON(f *testing.F) {
	f.Add([]byte(`{"message":{"role":"assistant","content":"x","thinking":"y"},"done":false}` + "\n" +
		`{"message":{"content":"","tool_calls":[{"id":"a","function":{"index":0,"name":"f","arguments":{"id":"A-17"}}}]},"done":true,"done_reason":"stop","eval_count":1}` + "\n"))
	f.Add([]byte(`{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		o := &record.Outcome{}
		if err := readNDJSON(bytes.NewReader(body), o, fakeClock(), nil, nil); err != nil {
			t.Fatal(err)
		}
		if o.Normal && o.Error != nil && o.Error.Kind != record.ErrFinishReason {
			t.Fatalf("normal end with error %+v", o.Error)
		}
		if o.Normal && o.FinishReason == nil {
			t.Fatal("normal end without a finish reason")
		}
	})
}
