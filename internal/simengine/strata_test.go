package simengine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
)

// The Strata dialect against the fact sheet read from Niko1221/Strata
// serve/server.py @452325a9fe7d5ff18c3898aa5443cdf3cce493e1 (and the
// serve/frontend.py that matches it). Each expectation names the function
// it comes from.

// strataAt starts the Strata dialect with a clock stopped at
// 1760000000 (so every time in an answer is known).
func strataAt(t *testing.T, edit func(*Config)) string {
	t.Helper()
	now := time.Unix(1760000000, 0)
	return startAs(t, DialectStrata, func(c *Config) {
		c.Now = func() time.Time { return now }
		if edit != nil {
			edit(c)
		}
	})
}

// TestStrataRoutes: each GET route answers Strata's body exactly (keys,
// order, Python's separators), the routes Strata lacks are its 404, and
// every answer closes its connection and carries the simulator header.
func TestStrataRoutes(t *testing.T) {
	t.Parallel()
	url := strataAt(t, nil)
	v := Version()
	health := `{"status": "ok", "max_context": 32768, "model": "simulated-qwen3", "images": false, "api_key": false, "loaded": true, "service": "strata"}`
	notFound := `{"error": {"message": "not found"}}`
	cases := []struct {
		method, path string
		status       int
		body         string // exact, "" when checked by check
		check        func(t *testing.T, body []byte)
	}{
		// server.py @452325a9 Handler.do_GET /health, /api/health.
		{"GET", "/health", 200, health, nil},
		{"GET", "/api/health", 200, health, nil},
		{"GET", "/health/", 200, health, nil}, // path.rstrip("/")
		// server.py @452325a9 Service.v1_status.
		{"GET", "/v1/status", 200, `{"service": "strata", "model": "simulated-qwen3", "loaded": true, "auto_load": true, ` +
			`"structured_output": {"formats": ["json_object", "json_schema"], "method": "prompt_and_validate", "constrained_decoding": false, "stream_buffered": true}, ` +
			`"engine": "` + v + `", "started": 1760000000, "uptime_s": 0, "cache_max_tokens": 32768, ` +
			`"context": {"native": 32768, "max_positions": 32768}, "concurrency": {"serving": 1, "requested": 1}, ` +
			`"dialects": ["/v1/chat/completions", "/v1/messages", "/v1/responses"], "vision": {"enabled": false, "available": false, "error": null}, ` +
			`"activity": {"requests": 0, "in_flight": 0, "last_request_at": null}, "last_timings": null, "vram": {"elastic": false}, ` +
			`"machine": {"at": 1760000000, "gpu": {"name": "strata simulated GPU", "used_mib": 20480.0, "total_mib": 24576.0, "util_pct": 0, "temp_c": 40, "power_w": 60.0}, ` +
			`"ram": {"used_gib": 8.0, "total_gib": 64.0}}}`, nil},
		// server.py @452325a9 Handler._props.
		{"GET", "/props", 200, "", func(t *testing.T, body []byte) {
			b, _ := prompts.Bundle()
			src, _, _ := prompts.Template(b)
			var tmpl strings.Builder
			pyString(&tmpl, string(src))
			want := `{"default_generation_settings": {"n_ctx": 32768, "params": {"temperature": 1.0, "top_p": 0.95, "top_k": 20, "min_p": 0.0, "presence_penalty": 0.0, "repeat_penalty": 1.0, "n_predict": -1}}, ` +
				`"total_slots": 1, "model_alias": "simulated-qwen3", "chat_template": ` + tmpl.String() + `, ` +
				`"chat_template_caps": {"supports_tools": true, "supports_tool_calls": true, "supports_system_role": true, "supports_parallel_tool_calls": true, "supports_preserve_reasoning": true}, ` +
				`"modalities": {"vision": false}, "models_autoload": true, "is_sleeping": false, "model_path": "simulated-qwen3.gguf", "build_info": "Strata ` + v + `"}`
			if string(body) != want {
				t.Errorf("/props\n got %s\nwant %s", body, want)
			}
			if object(t, body)["chat_template"] != string(src) {
				t.Errorf("/props chat_template is not the template's text")
			}
		}},
		{"GET", "/props?model=other", 404, `{"error": {"message": "model not found"}}`, nil},
		// server.py @452325a9 Handler.do_GET /slots: four keys only.
		{"GET", "/slots", 200, `[{"id": 0, "n_ctx": 32768, "is_processing": false, "n_prompt_tokens": 0}]`, nil},
		// server.py @452325a9 Handler.do_GET /v1/models: no owned_by.
		{"GET", "/v1/models", 200, `{"object": "list", "data": [{"id": "simulated-qwen3", "object": "model", "status": {"value": "loaded"}, "meta": {"n_ctx": 32768}, "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]}}]}`, nil},
		{"GET", "/models", 200, `{"object": "list", "data": [{"id": "simulated-qwen3", "object": "model", "status": {"value": "loaded"}, "meta": {"n_ctx": 32768}, "architecture": {"input_modalities": ["text"], "output_modalities": ["text"]}}]}`, nil},
		// No handler in the source: 404 {"error": {"message": "not found"}}.
		{"POST", "/tokenize", 404, notFound, nil},
		{"GET", "/tokenize", 404, notFound, nil},
		{"POST", "/detokenize", 404, notFound, nil},
		{"POST", "/apply-template", 404, notFound, nil},
		{"POST", "/completion", 404, notFound, nil},
		{"POST", "/chat/completions", 404, notFound, nil},
		{"GET", "/v1/models/simulated-qwen3", 404, notFound, nil},
		{"POST", "/health", 404, notFound, nil},
	}
	for _, c := range cases {
		r := callWith(t, c.method, url+c.path, []byte(`{}`), nil)
		if r.status != c.status {
			t.Errorf("%s %s: %d, want %d: %s", c.method, c.path, r.status, c.status, r.body)
			continue
		}
		if c.body != "" && string(r.body) != c.body {
			t.Errorf("%s %s\n got %s\nwant %s", c.method, c.path, r.body, c.body)
		}
		if c.check != nil {
			c.check(t, r.body)
		}
		if !r.closed || r.header.Get(dialect.SimulatorHeaderName) != v {
			t.Errorf("%s %s: Connection: close %v, %s %q", c.method, c.path, r.closed, dialect.SimulatorHeaderName, r.header.Get(dialect.SimulatorHeaderName))
		}
	}
}

// TestStrataAPIKey: with a key, every POST and the GET routes Strata
// protects answer 401 without it (server.py @452325a9 Handler._authorized);
// Bearer in any case or x-api-key passes; /health never needs it.
func TestStrataAPIKey(t *testing.T) {
	t.Parallel()
	url := strataAt(t, func(c *Config) { c.APIKey = "k3y-42" })
	refused := `{"error": {"type": "authentication_error", "message": "missing or wrong API key"}}`
	count := mustJSON(t, map[string]any{"messages": []any{map[string]any{"role": "user", "content": "hi"}}})
	bearer := map[string]string{"Authorization": "Bearer k3y-42"}
	for _, c := range []struct {
		method, path string
		header       map[string]string
		status       int
	}{
		{"GET", "/health", nil, 200},
		{"GET", "/api/health", nil, 200},
		{"GET", "/v1/status", nil, 401},
		{"GET", "/props", nil, 401},
		{"GET", "/slots", nil, 401},
		{"GET", "/v1/models", nil, 401},
		{"GET", "/models", nil, 401},
		{"GET", "/metrics", nil, 401},
		{"GET", "/v1/status/", nil, 401},
		{"POST", "/v1/chat/completions", nil, 401},
		{"POST", "/v1/messages/count_tokens", nil, 401},
		{"POST", "/tokenize", nil, 401}, // every POST, before routing
		{"GET", "/tokenize", nil, 404},  // an unknown GET needs no key
		{"GET", "/props", map[string]string{"Authorization": "Bearer wrong"}, 401},
		{"GET", "/props", map[string]string{"x-api-key": "wrong"}, 401},
		{"GET", "/props", map[string]string{"Authorization": "k3y-42"}, 401},
		{"GET", "/props", map[string]string{"Authorization": "Bearer wrong", "x-api-key": "k3y-42"}, 401},
		{"GET", "/v1/status", bearer, 200},
		{"GET", "/props", map[string]string{"Authorization": "BEARER  k3y-42 "}, 200},
		{"GET", "/slots", map[string]string{"authorization": "bearer k3y-42"}, 200},
		{"GET", "/v1/models", map[string]string{"x-api-key": "k3y-42"}, 200},
		{"GET", "/models", map[string]string{"Authorization": "Basic abc", "x-api-key": "k3y-42"}, 200},
		{"GET", "/metrics", bearer, 200},
		{"POST", "/v1/messages/count_tokens", map[string]string{"x-api-key": "k3y-42"}, 200},
		{"POST", "/tokenize", bearer, 404},
	} {
		r := callWith(t, c.method, url+c.path, count, c.header)
		if r.status != c.status {
			t.Errorf("%s %s %v: %d, want %d: %s", c.method, c.path, c.header, r.status, c.status, r.body)
		}
		if c.status == 401 && string(r.body) != refused {
			t.Errorf("%s %s: 401 body %s", c.method, c.path, r.body)
		}
	}
	if m := object(t, call(t, "GET", url+"/health", nil).body); m["api_key"] != true {
		t.Errorf("/health api_key %v with a key", m["api_key"])
	}
	// A chat request with the key streams.
	r := callWith(t, "POST", url+"/v1/chat/completions", fixtureBody(t, "warmup", nil), bearer)
	if r.status != 200 || !strings.HasSuffix(string(r.body), "data: [DONE]\n\n") {
		t.Errorf("chat with the key: %d %s", r.status, r.body)
	}
}

// TestStrataPropsUnavailable: /props answers 503 "the engine is not
// running" while the engine loads and whenever the scenario asks
// (server.py @452325a9 Handler._props); /v1/models lists no model and
// /slots none while it loads, and /health still answers 200.
func TestStrataPropsUnavailable(t *testing.T) {
	t.Parallel()
	down := `{"error": {"message": "the engine is not running"}}`
	for _, c := range []struct {
		name   string
		edit   func(*Config)
		models string
		slots  string
	}{
		{"loading", func(c *Config) { c.LoadTime = 1 << 40 }, `{"object": "list", "data": []}`, `[]`},
		{"scenario", func(c *Config) { c.Scenario.StrataPropsUnavailable = true }, "", ""},
	} {
		url := strataAt(t, c.edit)
		if r := call(t, "GET", url+"/props", nil); r.status != 503 || string(r.body) != down {
			t.Errorf("%s: /props %d %s", c.name, r.status, r.body)
		}
		if r := call(t, "GET", url+"/health", nil); r.status != 200 {
			t.Errorf("%s: /health %d", c.name, r.status)
		}
		if c.models != "" {
			if r := call(t, "GET", url+"/v1/models", nil); string(r.body) != c.models {
				t.Errorf("%s: /v1/models %s", c.name, r.body)
			}
			if r := call(t, "GET", url+"/slots", nil); string(r.body) != c.slots {
				t.Errorf("%s: /slots %s", c.name, r.body)
			}
		}
	}
	// The scenario option is read from a scenario file.
	var sc Scenario
	if err := json.Unmarshal([]byte(`{"strata_props_unavailable": true}`), &sc); err != nil || !sc.StrataPropsUnavailable {
		t.Errorf("strata_props_unavailable not read: %v", err)
	}
}

// anthropicBody is a bundle request in Anthropic's shape, as a client of
// count_tokens sends it: the tools as {name, description, input_schema},
// the effort as output_config.effort; blocks puts the text in text blocks.
func anthropicBody(t *testing.T, id string, blocks bool, extra map[string]any) []byte {
	t.Helper()
	b, _ := prompts.Bundle()
	f, err := b.Fixture(id)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []any
	for _, m := range f.Messages {
		var content any = m.Content
		if blocks {
			// Split in two text blocks: they are joined again.
			half := len(m.Content) / 2
			content = []any{map[string]any{"type": "text", "text": m.Content[:half]}, map[string]any{"type": "text", "text": m.Content[half:]}}
		}
		msgs = append(msgs, map[string]any{"role": m.Role, "content": content})
	}
	body := map[string]any{"model": "m", "max_tokens": f.MaxTokens, "messages": msgs, "output_config": map[string]any{"effort": "high"}}
	var tools []struct {
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	}
	if len(f.Tools) > 0 && string(f.Tools) != "null" {
		if err := json.Unmarshal(f.Tools, &tools); err != nil {
			t.Fatal(err)
		}
		var at []any
		for _, tl := range tools {
			at = append(at, map[string]any{"name": tl.Function.Name, "description": tl.Function.Description, "input_schema": tl.Function.Parameters})
		}
		body["tools"] = at
	}
	for k, v := range extra {
		body[k] = v
	}
	return mustJSON(t, body)
}

// TestStrataCountTokens: count_tokens of every bundle request, in either
// content form, is what Strata's rendering counts (strataCounts: the frozen
// input_tokens, but for the tool cases), which is also the prompt_tokens
// its chat request reports; the answer is exactly {"input_tokens": N}.
func TestStrataCountTokens(t *testing.T) {
	t.Parallel()
	url := strataAt(t, nil)
	b, _ := prompts.Bundle()
	counts := strataCounts(t)
	ids := b.SortedIDs()
	if len(ids) != 34 {
		t.Fatalf("%d fixtures", len(ids))
	}
	for _, id := range ids {
		for _, blocks := range []bool{false, true} {
			r := call(t, "POST", url+"/v1/messages/count_tokens", anthropicBody(t, id, blocks, nil))
			want := fmt.Sprintf(`{"input_tokens": %d}`, counts[id])
			if r.status != 200 || string(r.body) != want {
				t.Errorf("%s (blocks %v): %d %s, want %s", id, blocks, r.status, r.body, want)
			}
		}
	}
	// The count is the one the chat request of that conversation gets.
	for _, id := range []string{"warmup", "sanity-T1"} {
		r := call(t, "POST", url+"/v1/chat/completions", fixtureBody(t, id, nil))
		evs := events(t, r.body)
		usage, _ := evs[len(evs)-1]["usage"].(map[string]any)
		if int(num(usage["prompt_tokens"])) != counts[id] {
			t.Errorf("%s: chat prompt_tokens %v, count_tokens %d", id, usage["prompt_tokens"], counts[id])
		}
	}
	// A conversation that is not a bundle request is estimated, and a
	// system text makes the request another conversation.
	other := call(t, "POST", url+"/v1/messages/count_tokens", anthropicBody(t, "warmup", false, map[string]any{"system": "Be brief."}))
	if n := num(object(t, other.body)["input_tokens"]); other.status != 200 || n == float64(b.Fixtures["warmup"].InputTokens) || n <= 0 {
		t.Errorf("with a system text: %d %s", other.status, other.body)
	}
	// Strata's 400s: an effort outside its table, content of another type.
	for _, body := range [][]byte{
		anthropicBody(t, "warmup", false, map[string]any{"output_config": map[string]any{"effort": "extreme"}}),
		[]byte(`{"messages": [{"role": "user", "content": 7}]}`),
		[]byte(`{"messages": `),
	} {
		r := call(t, "POST", url+"/v1/messages/count_tokens", body)
		if m := object(t, r.body); r.status != 400 || keys(m["error"]) != "message,type" {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	// The scenario's tokenize_skew reaches count_tokens.
	skewed := strataAt(t, func(c *Config) { c.Scenario.TokenizeSkew = map[string]int{"sanity-T2": 3} })
	r := call(t, "POST", skewed+"/v1/messages/count_tokens", anthropicBody(t, "sanity-T2", false, nil))
	if want := fmt.Sprintf(`{"input_tokens": %d}`, counts["sanity-T2"]+3); string(r.body) != want {
		t.Errorf("skewed: %s, want %s", r.body, want)
	}
}

// TestAnthropicChatForm: the conversion of frontend.py
// anthropic_to_messages — system first, blocks joined, tool results as tool
// messages, a late system message as a user's, the tools' input_schema as
// parameters, thinking disabled before the effort, budget_effort's
// thresholds.
func TestAnthropicChatForm(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body     string
		messages string
		tools    string
		effort   string
		kwargs   string
	}{
		{`{"system": [{"type": "text", "text": "S1"}, {"type": "text", "text": "S2"}], "messages": [{"role": "user", "content": "q"}]}`,
			`[{"role":"system","content":"S1S2"},{"role":"user","content":"q"}]`, "", "", ""},
		{`{"messages": [{"role": "user", "content": [{"type": "tool_result", "content": "r"}, {"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]}, {"role": "system", "content": "late"}]}`,
			`[{"role":"tool","content":"r"},{"role":"user","content":"ab"},{"role":"user","content":"late"}]`, "", "", ""},
		{`{"messages": [], "tools": [{"name": "f", "input_schema": {"type": "object"}}, {"name": "g", "description": "d"}], "thinking": {"type": "disabled"}, "output_config": {"effort": "low"}}`,
			`null`, `[{"type":"function","function":{"name":"f","description":"","parameters":{"type":"object"}}},{"type":"function","function":{"name":"g","description":"d","parameters":{}}}]`,
			"", `{"enable_thinking":false}`},
		{`{"messages": [], "output_config": {"effort": "medium"}, "thinking": {"type": "enabled", "budget_tokens": 100}}`, `null`, "", `"medium"`, ""},
		{`{"messages": [], "thinking": {"type": "enabled", "budget_tokens": 2047}}`, `null`, "", `"low"`, ""},
		{`{"messages": [], "thinking": {"type": "enabled", "budget_tokens": 8191}}`, `null`, "", `"medium"`, ""},
		{`{"messages": [], "thinking": {"type": "enabled", "budget_tokens": 8192}}`, `null`, "", `"xhigh"`, ""},
	} {
		var a anthropicCount
		if err := json.Unmarshal([]byte(c.body), &a); err != nil {
			t.Fatal(err)
		}
		req, err := a.chatForm()
		if err != nil {
			t.Fatalf("%s: %v", c.body, err)
		}
		kw := ""
		if req.ChatTemplateKwargs != nil {
			kw = string(mustJSON(t, req.ChatTemplateKwargs))
		}
		if m := string(mustJSON(t, req.Messages)); m != c.messages || string(req.Tools) != c.tools || string(req.ReasoningEffort) != c.effort || kw != c.kwargs {
			t.Errorf("%s:\n messages %s\n tools %s\n effort %s kwargs %s", c.body, m, req.Tools, req.ReasoningEffort, kw)
		}
	}
}

// strataStream posts body and returns the raw SSE lines and the response.
func strataStream(t *testing.T, url string, body []byte) ([]string, *http.Response) {
	t.Helper()
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }() // read to its end below
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		if sc.Text() != "" {
			lines = append(lines, sc.Text())
		}
	}
	return lines, resp
}

var (
	strataChunkHead = regexp.MustCompile(`^data: \{"id": "chatcmpl-[0-9a-f]{24}", "object": "chat.completion.chunk", "created": \d+, "model": "simulated-qwen3", "choices": \[\{"index": 0, "delta": `)
	strataFinal     = regexp.MustCompile(`, "finish_reason": "(stop|length|tool_calls)"\}\], "usage": \{"prompt_tokens": (\d+), "completion_tokens": (\d+), "total_tokens": (\d+), "prompt_tokens_details": \{"cached_tokens": (\d+)\}\}, ` +
		`"timings": \{"cache_n": (\d+), "prompt_n": (\d+), "prompt_ms": \d+\.\d, "prompt_per_token_ms": (null|[\d.]+), "prompt_per_second": (null|\d+\.\d), ` +
		`"predicted_n": (\d+), "predicted_ms": \d+\.\d, "predicted_per_token_ms": (null|[\d.]+), "predicted_per_second": (null|\d+\.\d)\}\}$`)
)

// TestStrataStream: the stream of server.py @452325a9 openai_chunks and
// Handler._sse — close-delimited with Connection: close; the role chunk
// first; a keep-alive per prefill chunk before the first token; reasoning
// then content; a tool call's name with empty arguments, then its pieces;
// the final chunk with usage (though stream_options asks for none) and
// timings in order, prompt_n = prompt_tokens − cache_n, the rates rounded
// to 0.1; no system_fingerprint.
func TestStrataStream(t *testing.T) {
	t.Parallel()
	counts := strataCounts(t)
	url := strataAt(t, func(c *Config) { c.Now = nil; c.PromptTPS = 1e6 })
	for _, c := range []struct {
		id         string
		finish     string
		keepAlives int // at least, before the first token
		completion int // the plan's 10 tokens and <|im_end|>, or the call's
	}{
		{"warmup", "stop", 1, 11},
		{"performance-prompt-16k-r1", "stop", 4, 11},
		{"sanity-T1", "tool_calls", 1, 0},
	} {
		lines, resp := strataStream(t, url, fixtureBody(t, c.id, map[string]any{"stream_options": map[string]any{"include_usage": false}}))
		// net/http's client takes Connection: close into resp.Close.
		if !resp.Close || resp.ContentLength != -1 || len(resp.TransferEncoding) != 0 {
			t.Errorf("%s: Connection: close %v, length %d, transfer %v", c.id, resp.Close, resp.ContentLength, resp.TransferEncoding)
		}
		if resp.Header.Get("Cache-Control") != "no-cache" || resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("%s: headers %v", c.id, resp.Header)
		}
		if len(lines) < 4 || !strataChunkHead.MatchString(lines[0]) || !strings.HasSuffix(lines[0], `"delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}`) {
			t.Fatalf("%s: first line %q", c.id, lines[0])
		}
		if lines[len(lines)-1] != "data: [DONE]" {
			t.Errorf("%s: last line %q", c.id, lines[len(lines)-1])
		}
		alive := 0
		for _, l := range lines[1:] {
			if l != ": keep-alive" {
				break
			}
			alive++
		}
		if alive < c.keepAlives {
			t.Errorf("%s: %d keep-alives before the first token, want at least %d", c.id, alive, c.keepAlives)
		}
		var reasoning, content, args strings.Builder
		var kinds []string
		for i, l := range lines[1+alive : len(lines)-2] {
			if l == ": keep-alive" {
				continue
			}
			if !strataChunkHead.MatchString(l) || strings.Contains(l, "system_fingerprint") || strings.Contains(l, `"usage"`) {
				t.Errorf("%s: line %d %q", c.id, i, l)
				continue
			}
			d := delta(object(t, []byte(strings.TrimPrefix(l, "data: "))))
			kind := keys(d)
			if len(kinds) == 0 || kinds[len(kinds)-1] != kind {
				kinds = append(kinds, kind)
			}
			switch kind {
			case "reasoning_content":
				reasoning.WriteString(d["reasoning_content"].(string))
			case "content":
				content.WriteString(d["content"].(string))
			case "tool_calls":
				tc := d["tool_calls"].([]any)[0].(map[string]any)
				fn := tc["function"].(map[string]any)
				if tc["id"] != nil {
					if args.Len() != 0 || fn["arguments"] != "" || fn["name"] != "lookup_record" || !regexp.MustCompile(`^call_[0-9a-f]{24}$`).MatchString(tc["id"].(string)) ||
						!strings.Contains(l, `"delta": {"tool_calls": [{"index": 0, "id": "`) || !strings.Contains(l, `"type": "function", "function": {"name": "lookup_record", "arguments": ""}}]}`) {
						t.Errorf("%s: the call's first delta %s", c.id, l)
					}
				} else if keys(tc) != "function,index" {
					t.Errorf("%s: argument delta %s", c.id, l)
				}
				args.WriteString(fn["arguments"].(string))
			default:
				t.Errorf("%s: delta %s", c.id, l)
			}
		}
		m := strataFinal.FindStringSubmatch(lines[len(lines)-2])
		if !strataChunkHead.MatchString(lines[len(lines)-2]) || !strings.Contains(lines[len(lines)-2], `"delta": {}`) || m == nil {
			t.Fatalf("%s: final chunk %s", c.id, lines[len(lines)-2])
		}
		atoi := func(s string) int {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("%s: final chunk %s: %v", c.id, lines[len(lines)-2], err)
			}
			return n
		}
		prompt, completion, total, cached, cacheN, promptN, predicted := atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5]), atoi(m[6]), atoi(m[7]), atoi(m[10])
		if m[1] != c.finish || prompt != counts[c.id] || total != prompt+completion || cached != cacheN || promptN != prompt-cacheN || predicted != completion {
			t.Errorf("%s: final chunk %s", c.id, lines[len(lines)-2])
		}
		if c.completion != 0 && completion != c.completion {
			t.Errorf("%s: completion_tokens %d, want %d", c.id, completion, c.completion)
		}
		switch c.finish {
		case "stop":
			if strings.Join(kinds, " ") != "reasoning_content content" || reasoning.Len() == 0 || content.Len() == 0 {
				t.Errorf("%s: deltas %v", c.id, kinds)
			}
		case "tool_calls":
			if strings.Join(kinds, " ") != "reasoning_content tool_calls" || args.String() != `{"id":"A-17"}` {
				t.Errorf("%s: deltas %v, arguments %q", c.id, kinds, args.String())
			}
		}
	}
	// The last timings are /v1/status's, with when they were taken.
	st := object(t, call(t, "GET", url+"/v1/status", nil).body)
	lt, _ := st["last_timings"].(map[string]any)
	if keys(lt) != "at,cache_n,predicted_ms,predicted_n,predicted_per_second,predicted_per_token_ms,prompt_ms,prompt_n,prompt_per_second,prompt_per_token_ms" ||
		num(st["activity"].(map[string]any)["requests"]) != 3 {
		t.Errorf("/v1/status after three requests: %v", st)
	}
}

// TestStrataStreamError: a failure after the stream began is an error
// event and [DONE], with no final chunk (server.py @452325a9
// Handler._openai).
func TestStrataStreamError(t *testing.T) {
	t.Parallel()
	two := 2
	url := strataAt(t, func(c *Config) {
		c.Now = nil
		c.Scenario.Requests = map[string]Behaviour{"warmup": {ErrorEventAfter: &two, ErrorMessage: "engine: CUDA error"}}
	})
	lines, _ := strataStream(t, url, fixtureBody(t, "warmup", nil))
	n := len(lines)
	if n < 5 || lines[n-2] != `data: {"error": {"type": "server_error", "message": "engine: CUDA error"}}` || lines[n-1] != "data: [DONE]" {
		t.Fatalf("stream ends %q", lines[max(0, n-3):])
	}
	deltas := 0
	for _, l := range lines[:n-2] {
		if strings.Contains(l, `"usage"`) || strings.Contains(l, `"finish_reason": "`) {
			t.Errorf("a final chunk before the error: %s", l)
		}
		if strings.Contains(l, `"reasoning_content"`) {
			deltas++
		}
	}
	if !strings.Contains(lines[0], `"delta": {"role": "assistant", "content": ""}`) || deltas != 2 {
		t.Errorf("role chunk %q, %d deltas before the error", lines[0], deltas)
	}
}

// TestStrataReasoningBudget: reasoning_budget_tokens of 0 or less is no
// budget; a positive one ends thinking there (server.py @452325a9
// Service.reasoning_budget).
func TestStrataReasoningBudget(t *testing.T) {
	t.Parallel()
	url := strataAt(t, func(c *Config) { c.Now = nil })
	for _, c := range []struct {
		budget any
		want   int
	}{{nil, 4}, {0, 4}, {-1, 4}, {-20, 4}, {2, 2}} {
		extra := map[string]any{}
		if c.budget != nil {
			extra["reasoning_budget_tokens"] = c.budget
		}
		evs := events(t, call(t, "POST", url+"/v1/chat/completions", fixtureBody(t, "warmup", extra)).body)
		got := 0
		for _, ev := range evs {
			if _, ok := delta(ev)["reasoning_content"]; ok {
				got++
			}
		}
		if got != c.want {
			t.Errorf("reasoning_budget_tokens %v: %d reasoning deltas, want %d", c.budget, got, c.want)
		}
	}
}

// TestStrataKnownAsSimulated: what a run gathers from the Strata dialect is
// known to be the simulator's (dialect.SimulatorTraces), though its /props
// has no strata_simulator field; the old dialect name still speaks Strata.
func TestStrataKnownAsSimulated(t *testing.T) {
	t.Parallel()
	for _, name := range []string{DialectStrata, DialectStrataAlias} {
		if !KnownDialect(name) {
			t.Errorf("%s is not a known dialect", name)
		}
		url := startAs(t, name, nil)
		props := call(t, "GET", url+"/props", nil)
		health := call(t, "GET", url+"/health", nil)
		ev := contract.ServerEvidence{Props: props.body, Status: call(t, "GET", url+"/v1/status", nil).body,
			Models: call(t, "GET", url+"/v1/models", nil).body, ServerHeader: health.header.Get("Server"),
			SimulatorHeader: health.header.Get(dialect.SimulatorHeaderName)}
		p := object(t, props.body)
		if _, ok := p["strata_simulator"]; ok || object(t, health.body)["service"] != "strata" {
			t.Errorf("%s: /props %v, /health %s", name, keys(p), health.body)
		}
		v := strings.TrimPrefix(p["build_info"].(string), "Strata ")
		traces := dialect.SimulatorTraces(dialect.SimulatorEvidence{Server: ev, EngineVersion: v})
		if !dialect.Identify(ev).Simulated || len(traces) < 3 || !strings.Contains(strings.Join(traces, "; "), dialect.SimulatorHeaderName) {
			t.Errorf("%s: not known as the simulator: %v", name, traces)
		}
	}
	for _, d := range Dialects() {
		if d == DialectStrataAlias {
			t.Errorf("Dialects lists the old name %s", d)
		}
	}
}

// TestStrataCountsTheInnerTools: the simulated Strata server counts a tool
// case as the real one does, fewer tokens than the bundle froze, in its
// chat usage and its count_tokens alike; the other dialects count the
// bundle's own rendering.
func TestStrataCountsTheInnerTools(t *testing.T) {
	t.Parallel()
	want := strataCounts(t)
	b, _ := prompts.Bundle()
	tools := 0
	for id, n := range want {
		if b.Fixtures[id].OffersTools() {
			tools++
			if n >= b.Fixtures[id].InputTokens {
				t.Errorf("%s: Strata's rendering counts %d, the bundle froze %d", id, n, b.Fixtures[id].InputTokens)
			}
		}
	}
	if tools != 4 {
		t.Fatalf("%d tool fixtures, want T1-T4", tools)
	}
	fast := func(c *Config) { c.PromptTPS, c.DecodeTPS = 1e7, 1e7 }
	url := strataAt(t, fast)
	llama := startAs(t, DialectLlamaCpp, fast)
	for _, id := range []string{"sanity-T1", "sanity-T2", "sanity-T3", "sanity-T4", "warmup"} {
		r := call(t, "POST", url+"/v1/messages/count_tokens", anthropicBody(t, id, false, nil))
		if got := fmt.Sprintf(`{"input_tokens": %d}`, want[id]); string(r.body) != got {
			t.Errorf("%s: count_tokens %s, want %s", id, r.body, got)
		}
		for _, c := range []struct {
			url  string
			want int
		}{{url, want[id]}, {llama, b.Fixtures[id].InputTokens}} {
			evs := events(t, call(t, "POST", c.url+"/v1/chat/completions", fixtureBody(t, id, nil)).body)
			usage, _ := evs[len(evs)-1]["usage"].(map[string]any)
			if int(num(usage["prompt_tokens"])) != c.want {
				t.Errorf("%s at %s: chat prompt_tokens %v, want %d", id, c.url, usage["prompt_tokens"], c.want)
			}
		}
	}
}
