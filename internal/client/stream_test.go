package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/captures"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/sharedpath"
	"github.com/strata-bench/strata/internal/sse"
)

// fakeClock returns 0.001, 0.002, ... so offsets are deterministic.
func fakeClock() func() float64 {
	n := 0
	return func() float64 { n++; return float64(n) / 1000 }
}

func capture(t *testing.T, name string) *captures.Capture {
	t.Helper()
	c, err := captures.Load(sharedpath.Path(t, "wire", "llama-server", "captures"), name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func replay(body []byte) (*record.Outcome, error) {
	o := &record.Outcome{}
	err := readStream(bytes.NewReader(body), o, fakeClock(), nil, nil)
	return o, err
}

func field(t *testing.T, raw json.RawMessage, name string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return m[name]
}

// TestCaptures reads real llama-server streams.
func TestCaptures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		finish    string
		errKind   string
		first     string
		answer    string
		reasoning string
		tools     int
		toolArgs  string
		usage     bool
		timings   bool
		comments  int
	}{
		{name: "chat-warmup-stream-max128", finish: "length", first: record.EvAnswer, usage: true, timings: true},
		{name: "chat-warmup-stream-no-include-usage", finish: "length", first: record.EvAnswer, usage: false, timings: true},
		{name: "grammar-think-warmup-stream-max128", finish: "stop", first: record.EvReasoning, answer: "READY", reasoning: "checking the records\n", usage: true, timings: true},
		{name: "grammar-think-warmup-stream-max6-cap-in-reasoning", finish: "length", first: record.EvReasoning, usage: true, timings: true},
		{name: "scripted-T1-tools-auto-stream", finish: "tool_calls", first: record.EvReasoning, reasoning: "Looking up the record", tools: 1, toolArgs: `{"id": "A-17"}`, usage: true, timings: true},
		{name: "scripted-T1-tools-auto-stream-max25-cap-in-arguments", finish: "length", first: record.EvReasoning, tools: 1, toolArgs: `{"id": "A-`, usage: true, timings: true},
		{name: "scripted-T1-tools-auto-stream-max14-cap-in-toolcall", finish: "length", first: record.EvReasoning, usage: true, timings: true},
		{name: "scripted-T1-tools-auto-stream-no-think-logitbias", finish: "tool_calls", first: record.EvToolCall, tools: 1, toolArgs: `{"id": "A-17"}`, usage: true, timings: true},
		{name: "chat-prompt19k-stream-max512-sse_ping_interval1", finish: "length", first: record.EvAnswer, usage: true, timings: true, comments: 2},
		{name: "extra-return_progress-stream", finish: "length", first: record.EvAnswer, usage: true, timings: true},
		{name: "ctx2048-prompt100rec-stream-context-fills-during-generation", finish: "length", first: record.EvAnswer, usage: true, timings: true},
		{name: "rawmodel-warmup-max512-peg-error-after-invalid-utf8", errKind: record.ErrStreamError, first: record.EvAnswer},
		{name: "grammar-think-warmup-stream-max128-thinking_budget_tokens0", errKind: record.ErrStreamError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cap := capture(t, c.name)
			o, err := replay(cap.Body)
			if err != nil {
				t.Fatal(err)
			}
			if c.errKind != "" {
				if o.Error == nil || o.Error.Kind != c.errKind || o.Normal {
					t.Fatalf("error %+v normal %v, want kind %s", o.Error, o.Normal, c.errKind)
				}
				if !strings.Contains(o.Error.Message, "server_error: ") {
					t.Errorf("the server's message is not kept: %q", o.Error.Message)
				}
				if o.FinishReason != nil || o.Usage != nil {
					t.Errorf("finish %v usage %s after an error event", o.FinishReason, o.Usage)
				}
			} else {
				if o.Error != nil || !o.Normal {
					t.Fatalf("error %+v normal %v", o.Error, o.Normal)
				}
				if o.Finish() != c.finish {
					t.Errorf("finish %q, want %q", o.Finish(), c.finish)
				}
			}
			if o.FirstDeltaKind != c.first {
				t.Errorf("first delta kind %q, want %q", o.FirstDeltaKind, c.first)
			}
			if c.answer != "" && o.Answer != c.answer {
				t.Errorf("answer %q, want %q", o.Answer, c.answer)
			}
			if c.reasoning != "" && o.Reasoning != c.reasoning {
				t.Errorf("reasoning %q, want %q", o.Reasoning, c.reasoning)
			}
			if len(o.ToolCalls) != c.tools {
				t.Fatalf("%d tool calls, want %d", len(o.ToolCalls), c.tools)
			}
			if c.tools == 1 {
				tc := o.ToolCalls[0]
				if tc.Name != "lookup_record" || tc.Arguments != c.toolArgs || tc.ID == "" || tc.Type != "function" {
					t.Errorf("tool call %+v", tc)
				}
			}
			if (o.Usage != nil) != c.usage || (o.Timings != nil) != c.timings {
				t.Errorf("usage %s timings %s", o.Usage, o.Timings)
			}
			if c.usage && field(t, o.Usage, "completion_tokens") == nil {
				t.Errorf("usage lacks completion_tokens: %s", o.Usage)
			}
			n := 0
			for _, e := range o.Events {
				if e.Kind == record.EvComment {
					n++
				}
			}
			if n != c.comments {
				t.Errorf("%d comments, want %d", n, c.comments)
			}
			// TTFT never precedes the first qualifying delta: role chunks,
			// comments and empty deltas come first and do not count.
			if o.TTFT != nil {
				for _, e := range o.Events {
					if e.T >= *o.TTFT {
						break
					}
					if e.Kind == record.EvReasoning || e.Kind == record.EvAnswer || e.Kind == record.EvToolCall {
						t.Errorf("a %s event at %v precedes TTFT %v", e.Kind, e.T, *o.TTFT)
					}
				}
			}
		})
	}
}

func TestStreamRules(t *testing.T) {
	t.Parallel()
	const role = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"role":"assistant","content":null}}]}` + "\n\n"
	const answer = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"READY"}}]}` + "\n\n"
	const finish = `data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}]}` + "\n\n"
	const usage = `data: {"choices":[],"usage":{"completion_tokens":3,"prompt_tokens":30,"total_tokens":33},"timings":{"prompt_n":30,"prompt_ms":3.0,"predicted_n":3,"predicted_ms":6.0,"predicted_per_second":500.0}}` + "\n\n"
	const done = "data: [DONE]\n\n"
	cases := []struct {
		name    string
		body    string
		errKind string
		first   string
	}{
		{"complete", role + answer + finish + usage + done, "", record.EvAnswer},
		{"keep-alives and empty deltas do not count", ":\n\n" + role + `data: {"choices":[{"index":0,"delta":{"content":""}}]}` + "\n\n" + `data: {"choices":[{"index":0,"delta":{"reasoning_content":""}}]}` + "\n\n" + answer + finish + usage + done, "", record.EvAnswer},
		{"finish then EOF without DONE", role + answer + finish + usage, record.ErrTruncated, record.EvAnswer},
		{"cut before finish", role + answer, record.ErrTruncated, record.EvAnswer},
		{"DONE without finish", role + answer + usage + done, record.ErrNoFinish, record.EvAnswer},
		{"malformed JSON line", role + "data: {\"choices\":[{\"delta\":{\"content\":\"x\"\n\n" + answer + finish + usage + done, record.ErrMalformed, record.EvAnswer},
		{"duplicate keys", role + `data: {"choices":[],"choices":[]}` + "\n\n" + finish + done, record.ErrMalformed, ""},
		{"invalid UTF-8", role + "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"\xff\"}}]}\n\n" + finish + done, record.ErrMalformed, ""},
		{"unknown finish reason", role + answer + `data: {"choices":[{"finish_reason":"content_filter","index":0,"delta":{}}]}` + "\n\n" + done, record.ErrFinishReason, record.EvAnswer},
		{"data after DONE", role + answer + finish + done + answer, record.ErrAfterDone, record.EvAnswer},
		{"unterminated last event", role + answer + finish + "data: [DONE]", record.ErrMalformed, record.EvAnswer},
		{"HTML instead of SSE", "<html><body>502 Bad Gateway</body></html>\n", record.ErrTruncated, ""},
		{"CRLF framing", strings.ReplaceAll(role+answer+finish+usage+done, "\n", "\r\n"), "", record.EvAnswer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, err := replay([]byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.errKind == "" && (o.Error != nil || !o.Normal) {
				t.Fatalf("error %+v", o.Error)
			}
			if c.errKind != "" && (o.Error == nil || o.Error.Kind != c.errKind) {
				t.Fatalf("error %+v, want %s", o.Error, c.errKind)
			}
			if o.FirstDeltaKind != c.first {
				t.Errorf("first delta %q, want %q", o.FirstDeltaKind, c.first)
			}
		})
	}
}

func TestLongLine(t *testing.T) {
	t.Parallel()
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + strings.Repeat("a", 2<<20) + "\"}}]}\n\n"
	o, err := replay([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if o.Error == nil || o.Error.Kind != record.ErrLimit || !strings.Contains(o.Error.Message, "longer than the limit") {
		t.Fatalf("error %+v", o.Error)
	}
}

func FuzzReadStream(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte(":\n\ndata: {\"error\":{\"code\":500,\"message\":\"x\"}}\n\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := replay(body)
		if err != nil {
			t.Fatal(err)
		}
		// A normal end fails only for a finish reason outside the protocol's.
		if o.Normal && o.Error != nil && o.Error.Kind != record.ErrFinishReason {
			t.Fatalf("normal end with error %+v", o.Error)
		}
		if o.Normal && o.FinishReason == nil {
			t.Fatal("normal end without a finish reason")
		}
	})
}

// TestReasoningUnderEitherName: vLLM and Ollama stream delta.reasoning,
// the others delta.reasoning_content; a delta with both keeps the text.
func TestReasoningUnderEitherName(t *testing.T) {
	t.Parallel()
	for _, delta := range []string{`{"reasoning":"think"}`, `{"reasoning_content":"think"}`, `{"reasoning":"think","reasoning_content":null}`, `{"reasoning_content":"think","reasoning":""}`} {
		body := `data: {"choices":[{"index":0,"delta":` + delta + `}]}` + "\n\n" +
			`data: {"choices":[{"index":0,"delta":{"content":"42"},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			serve(t, w, body)
		}))
		o, _, _ := New(Options{BaseURL: srv.URL}).Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
		srv.Close()
		if o.Reasoning != "think" || o.FirstDeltaKind != record.EvReasoning || o.Answer != "42" {
			t.Errorf("%s: reasoning %q, first %q, answer %q", delta, o.Reasoning, o.FirstDeltaKind, o.Answer)
		}
	}
}

// chatBody is the outcome of one request to a server that answers body.
func chatBody(t *testing.T, body string) *record.Outcome {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		serve(t, w, body)
	}))
	defer srv.Close()
	o, _, _ := New(Options{BaseURL: srv.URL}).Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
	return o
}

// TestStreamBoundsAreExact: each bound the README states holds at its
// edge, through the real client (whose trace also holds the headers): what
// is at the bound is read to its normal end, one past it fails with
// limit_exceeded and names the bound.
func TestStreamBoundsAreExact(t *testing.T) {
	t.Parallel()
	const end = `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" + "data: [DONE]\n\n"
	content := func(text string) string {
		return `data: {"choices":[{"index":0,"delta":{"content":"` + text + `"}}]}` + "\n\n"
	}
	// lineOf is an answer chunk whose data line is n bytes without its
	// terminator.
	lineOf := func(n int, eol string) string {
		pre, post := `data: {"choices":[{"index":0,"delta":{"content":"`, `"}}]}`
		return pre + strings.Repeat("a", n-len(pre)-len(post)) + post + eol + eol
	}
	// calls is one chunk opening calls first..first+n-1, each with the
	// given type string.
	calls := func(first, n int, typ string) string {
		var ds []string
		for i := first; i < first+n; i++ {
			ds = append(ds, fmt.Sprintf(`{"index":%d,"id":"c%d","type":"%s","function":{"name":"f","arguments":"{}"}}`, i, i, typ))
		}
		return `data: {"choices":[{"index":0,"delta":{"tool_calls":[` + strings.Join(ds, ",") + `]}}]}` + "\n\n"
	}
	// textOf is n bytes of answer in chunks well under the event bound.
	textOf := func(n int) string {
		var b strings.Builder
		for ; n > 0; n -= 1 << 19 {
			b.WriteString(content(strings.Repeat("t", min(n, 1<<19))))
		}
		return b.String()
	}
	big := strings.Repeat("F", 900_000)
	cases := []struct {
		name, body, says string
	}{
		// The finish chunk and [DONE] are two of the events.
		{"65,536 events", strings.Repeat(":\n", MaxEvents-3) + content("x") + end, ""},
		{"65,537 events", strings.Repeat(":\n", MaxEvents-2) + content("x") + end, "more than 65536 events"},
		{"a line of 1 MiB (LF)", lineOf(sse.MaxLine, "\n") + end, ""},
		{"a line of 1 MiB (CRLF)", lineOf(sse.MaxLine, "\r\n") + end, ""},
		{"a line of 1 MiB + 1 (LF)", lineOf(sse.MaxLine+1, "\n") + end, "longer than the limit"},
		{"a line of 1 MiB + 1 (CRLF)", lineOf(sse.MaxLine+1, "\r\n") + end, "longer than the limit"},
		{"4 MiB of text", textOf(MaxTextBytes) + end, ""},
		{"4 MiB + 1 of text", textOf(MaxTextBytes+1) + end, "grew past 4194304 bytes"},
		{"64 tool calls", calls(0, 40, "function") + calls(40, 24, "function") + end, ""},
		{"65 tool calls in one chunk", calls(0, 65, "function") + end, "more than 64 tool calls"},
		{"65 tool calls over two chunks", calls(0, 40, "function") + calls(40, 25, "function") + end, "more than 64 tool calls"},
		{"tool-call type strings count", calls(0, 1, big) + calls(1, 1, big) + calls(2, 1, big) + calls(3, 1, big) + calls(4, 1, big) + end, "grew past 4194304 bytes"},
		{"repeated ids count", strings.Repeat(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"`+big+`"}]}}]}`+"\n\n", 5) + end, "grew past 4194304 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := chatBody(t, c.body)
			if c.says == "" {
				if o.Error != nil || !o.Normal {
					t.Fatalf("error %+v, want a normal end", o.Error)
				}
				return
			}
			if o.Error == nil || o.Error.Kind != record.ErrLimit || !strings.Contains(o.Error.Message, c.says) || o.Normal {
				t.Fatalf("error %+v, want %s (%s)", o.Error, record.ErrLimit, c.says)
			}
			kept := len(o.Answer)
			for _, tc := range o.ToolCalls {
				kept += len(tc.ID) + len(tc.Type) + len(tc.Name) + len(tc.Arguments)
			}
			if kept > MaxTextBytes || len(o.ToolCalls) > MaxToolCalls {
				t.Errorf("kept %d bytes in %d tool calls past the bound", kept, len(o.ToolCalls))
			}
		})
	}
}

// TestClippedTextIsRedactedFirst: a malformed line and
// an error message are cut to 1 KiB after they are redacted, so neither
// the key in use nor a token survives cut short where the cut falls
// inside it.
func TestClippedTextIsRedactedFirst(t *testing.T) {
	t.Parallel()
	const key, token = "k3y-Zq7vX2mW4pL9k8c", "ghp_R8m2kQv7Xz4Lp9Tw3Nb6Yc1Hd5Fg0Ja8Se2U"
	pad := strings.Repeat("x", clipLen-12)
	for _, secret := range []string{key, token} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.RawQuery, "plain") {
				w.WriteHeader(500)
				serve(t, w, pad+" "+secret+" and more")
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			serve(t, w, fmt.Sprintf("data: {%s %s\n\n", pad, secret))
		}))
		for _, path := range []string{"", "?plain"} {
			c := New(Options{BaseURL: srv.URL + path, APIKey: key})
			o, _, _ := c.Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
			got := strings.Join(o.Malformed, " ")
			if o.Error != nil {
				got += " " + o.Error.Message
			}
			if strings.Contains(got, secret[:8]) || !strings.Contains(got, "<secret>") {
				t.Errorf("%s%s: %q", secret[:8], path, got[max(0, len(got)-60):])
			}
		}
		srv.Close()
	}
}

// TestToolCallIndexNotANumber: a tool call whose index is not a number is
// a malformed line, on either wire, not a panic of the runner (jsontext's
// Int panics on a token of another kind).
func TestToolCallIndexNotANumber(t *testing.T) {
	t.Parallel()
	sse := &record.Outcome{}
	if err := readStream(strings.NewReader(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":"x"}]}}]}`+"\n\n"), sse, fakeClock(), nil, nil); err != nil {
		t.Fatal(err)
	}
	nd := &record.Outcome{}
	if err := readNDJSON(strings.NewReader(`{"message":{"tool_calls":[{"function":{"index":"x"}}]},"done":false}`+"\n"), nd, fakeClock(), nil, nil); err != nil {
		t.Fatal(err)
	}
	for name, o := range map[string]*record.Outcome{"SSE": sse, "NDJSON": nd} {
		if o.Error == nil || o.Error.Kind != record.ErrMalformed || !strings.Contains(o.Error.Message, "tool_calls index") {
			t.Errorf("%s: %+v", name, o.Error)
		}
	}
}
