package simengine

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/dialect"
)

// startAs starts a simulator speaking as dialect on 127.0.0.1:0 with the
// embedded bundle, short scripted outputs and a right answer to every
// sanity case.
func startAs(t *testing.T, dialect string, edit func(*Config)) string {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := prompts.Template(b)
	if err != nil {
		t.Fatal(err)
	}
	four, six := 4, 6
	cfg := Config{PromptTPS: 3000, DecodeTPS: 1000, ReasoningTokens: 4, Accuracy: 1, Slots: 1, ContextTokens: 32768,
		ModelPath: "simulated-qwen3.gguf", Bundle: b, Template: string(src), Dialect: dialect,
		Scenario: &Scenario{Default: Behaviour{ReasoningTokens: &four, AnswerTokens: &six}}}
	if edit != nil {
		edit(&cfg)
	}
	s := New(cfg)
	url, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return url
}

// fixtureBody is a bundle request's chat body as strata sends it.
func fixtureBody(t *testing.T, id string, extra map[string]any) []byte {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	f, err := b.Fixture(id)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"model": "simulated-qwen3.gguf", "messages": f.Messages, "max_tokens": f.MaxTokens, "seed": f.Seed,
		"stream": true, "stream_options": map[string]any{"include_usage": true}, "temperature": 0.6, "top_p": 0.95,
		"top_k": 20, "min_p": 0, "repeat_penalty": 1.0, "repetition_penalty": 1.0, "reasoning_effort": "high",
		"chat_template_kwargs": map[string]any{"enable_thinking": true}}
	if len(f.Tools) > 0 && string(f.Tools) != "null" {
		body["tools"] = f.Tools
	}
	for k, v := range extra {
		body[k] = v
	}
	data, _ := json.Marshal(body)
	return data
}

type reply struct {
	status int
	header http.Header
	body   []byte
	closed bool // the server closes the connection after it (Connection: close)
}

func call(t *testing.T, method, url string, body []byte) reply {
	t.Helper()
	var header map[string]string
	if body != nil {
		header = map[string]string{"Content-Type": "application/json"}
	}
	return callWith(t, method, url, body, header)
}

// callWith is call with these request headers.
func callWith(t *testing.T, method, url string, body []byte, header map[string]string) reply {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }() // read to its end below
	data, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, data, resp.Close}
}

func object(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
	return m
}

// events are the JSON events of an SSE stream (without [DONE]).
func events(t *testing.T, body []byte) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range strings.Split(string(body), "\n\n") {
		ev = strings.TrimSpace(ev)
		if ev == "" || ev == "data: [DONE]" || strings.HasPrefix(ev, ":") { // [DONE] and comments
			continue
		}
		out = append(out, object(t, []byte(strings.TrimPrefix(ev, "data: "))))
	}
	if !strings.HasSuffix(string(body), "data: [DONE]\n\n") {
		t.Errorf("stream does not end with [DONE]: %q", body[max(0, len(body)-80):])
	}
	return out
}

func keys(v any) string {
	m, _ := v.(map[string]any)
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func num(v any) float64 { f, _ := v.(float64); return f }

// delta and choice of an event's first choice (nil when choices is empty).
func choice0(ev map[string]any) map[string]any {
	cs, _ := ev["choices"].([]any)
	if len(cs) == 0 {
		return nil
	}
	c, _ := cs[0].(map[string]any)
	return c
}

func delta(ev map[string]any) map[string]any {
	c := choice0(ev)
	if c == nil {
		return nil
	}
	d, _ := c["delta"].(map[string]any)
	return d
}

// TestEngineIdentification: each dialect's identification endpoints have
// the engine's shapes, the routes it lacks are its 404, and every response
// says it is the simulator.
func TestEngineIdentification(t *testing.T) {
	t.Parallel()
	type probe struct {
		method, path string
		body         []byte
		status       int
		check        func(t *testing.T, r reply)
	}
	modelsOwnedBy := func(owner string, more ...string) probe {
		return probe{"GET", "/v1/models", nil, 200, func(t *testing.T, r reply) {
			m := object(t, r.body)
			d := m["data"].([]any)[0].(map[string]any)
			if m["object"] != "list" || d["owned_by"] != owner || d["id"] != "simulated-qwen3.gguf" {
				t.Errorf("/v1/models %s", r.body)
			}
			for _, k := range more {
				if _, ok := d[k]; !ok {
					t.Errorf("/v1/models card has no %s: %s", k, r.body)
				}
			}
		}}
	}
	missing := func(method, path string) probe {
		return probe{method, path, []byte(`{}`), 404, nil}
	}
	tok := []byte(`{"model":"m","messages":` + string(mustJSON(t, firstMessages(t, "sanity-T1"))) +
		`,"add_generation_prompt":true,"chat_template_kwargs":{"enable_thinking":true}}`)
	cases := []struct {
		dialect string
		probes  []probe
	}{
		// vllm/entrypoints/serve/instrumentator/basic.py @dcbf2004 (/version);
		// vllm/entrypoints/serve/engine/protocol.py @f1bf7bd0 (ModelCard);
		// vllm/entrypoints/serve/tokenize/protocol.py @343bacaf (/tokenize).
		{DialectVLLM, []probe{
			{"GET", "/version", nil, 200, func(t *testing.T, r reply) {
				if m := object(t, r.body); m["version"] != "0.11.2" || keys(m) != "version" {
					t.Errorf("/version %s", r.body)
				}
			}},
			modelsOwnedBy("vllm", "root", "parent", "max_model_len", "permission"),
			{"POST", "/tokenize", tok, 200, func(t *testing.T, r reply) {
				m := object(t, r.body)
				if num(m["count"]) != 174 || num(m["max_model_len"]) != 32768 || len(m["tokens"].([]any)) != 174 {
					t.Errorf("/tokenize count %v max_model_len %v, %d tokens", m["count"], m["max_model_len"], len(m["tokens"].([]any)))
				}
			}},
			// render/api_router.py @1c608d64: the exact chat body, answered
			// with token_ids and the resolved sampling_params.
			{"POST", "/v1/chat/completions/render", tok, 200, func(t *testing.T, r reply) {
				m := object(t, r.body)
				sp, _ := m["sampling_params"].(map[string]any)
				if len(m["token_ids"].([]any)) != 174 || sp == nil || num(sp["temperature"]) != 1 || num(sp["repetition_penalty"]) != 1 {
					t.Errorf("render %s", r.body)
				}
			}},
			missing("GET", "/props"), missing("GET", "/slots"), missing("POST", "/apply-template"), missing("GET", "/v1/status"),
		}},
		// python/sglang/srt/entrypoints/http_server.py @0025436e (/get_server_info,
		// deprecated for /server_info; no /version); openai/protocol.py
		// @004c82e0 (ModelCard, TokenizeRequest with messages).
		{DialectSGLang, []probe{
			modelsOwnedBy("sglang", "max_model_len", "root"),
			{"GET", "/server_info", nil, 200, func(t *testing.T, r reply) {
				m := object(t, r.body)
				if m["version"] != "0.5.6" || m["enable_cache_report"] != true || m["enable_metrics"] != false ||
					m["reasoning_parser"] != "qwen3" || num(m["tp_size"]) != 1 || m["model_path"] != "simulated-qwen3.gguf" {
					t.Errorf("/server_info %s", r.body)
				}
			}},
			{"GET", "/get_server_info", nil, 200, nil},
			{"POST", "/v1/tokenize", tok, 200, func(t *testing.T, r reply) {
				if m := object(t, r.body); num(m["count"]) != 174 {
					t.Errorf("/v1/tokenize of messages %s", r.body)
				}
			}},
			missing("GET", "/version"), missing("GET", "/props"), missing("GET", "/slots"), missing("POST", "/apply-template"), missing("GET", "/v1/status"),
		}},
		// ollama server/routes.go (index id 762132854): / and /api/version;
		// openai/openai.go @00988753 ToListCompletion (owned_by namespace).
		{DialectOllama, []probe{
			{"GET", "/", nil, 200, func(t *testing.T, r reply) {
				if string(r.body) != "Ollama is running" {
					t.Errorf("/ %q", r.body)
				}
			}},
			{"GET", "/api/version", nil, 200, func(t *testing.T, r reply) {
				if m := object(t, r.body); m["version"] != "0.32.15" {
					t.Errorf("/api/version %s", r.body)
				}
			}},
			modelsOwnedBy("library"),
			// GenerateRoutes registers no /health (routes.go @fb30760).
			{"GET", "/health", nil, 404, nil},
			missing("GET", "/props"), missing("GET", "/slots"), missing("POST", "/apply-template"), missing("POST", "/tokenize"), missing("GET", "/v1/status"), missing("GET", "/version"),
		}},
		// ik_llama.cpp examples/server/server.cpp @bb7e35c6 (Server header,
		// /version, /props without build_info, owned_by "llamacpp");
		// server-context.cpp @0192b22b (/slots fields).
		{DialectIKLlama, []probe{
			{"GET", "/version", nil, 200, func(t *testing.T, r reply) {
				if string(r.body) != `{"features":{"sql":false,"zstd_compression":false},"version":4}`+"\n" {
					t.Errorf("/version %s", r.body)
				}
			}},
			{"GET", "/props", nil, 200, func(t *testing.T, r reply) {
				m := object(t, r.body)
				if _, ok := m["build_info"]; ok {
					t.Errorf("/props has build_info")
				}
				for _, k := range []string{"system_prompt", "model_alias", "model_name", "model_path", "n_ctx", "total_slots", "chat_template", "default_generation_settings"} {
					if _, ok := m[k]; !ok {
						t.Errorf("/props has no %s", k)
					}
				}
				if m["strata_simulator"] != true {
					t.Errorf("/props has no simulator marker")
				}
			}},
			{"POST", "/apply-template", tok, 200, func(t *testing.T, r reply) {
				if p, _ := object(t, r.body)["prompt"].(string); !strings.Contains(p, "[case sanity-T1]") {
					t.Errorf("/apply-template %s", r.body)
				}
			}},
			{"POST", "/tokenize", []byte(`{"content":"hello"}`), 200, nil},
			modelsOwnedBy("llamacpp"),
			missing("GET", "/v1/status"),
		}},
		// LM Studio docs: REST API v0 GET /api/v0/models "Response format"
		// (lmstudio-ai/docs 1_developer/2_rest/endpoints.mdx).
		{DialectLMStudio, []probe{
			{"GET", "/api/v0/models", nil, 200, func(t *testing.T, r reply) {
				m := object(t, r.body)
				d := m["data"].([]any)[0].(map[string]any)
				if keys(d) != "arch,compatibility_type,id,max_context_length,object,publisher,quantization,state,type" ||
					d["type"] != "llm" || d["state"] != "loaded" || d["compatibility_type"] != "gguf" || num(d["max_context_length"]) != 32768 {
					t.Errorf("/api/v0/models %s", r.body)
				}
			}},
			modelsOwnedBy("organization_owner"),
			missing("GET", "/props"), missing("GET", "/slots"), missing("POST", "/apply-template"), missing("POST", "/tokenize"), missing("GET", "/v1/status"),
		}},
		// theroyallab/tabbyAPI endpoints/core/router.py @e632af4 (/v1/model,
		// /props, /.well-known/serviceinfo, /v1/sampling/overrides,
		// /v1/token/encode); endpoints/core/types/model.py (owned_by).
		{DialectTabbyAPI, []probe{
			modelsOwnedBy("tabbyAPI", "parameters"),
			{"GET", "/props", nil, 200, func(t *testing.T, r reply) {
				m := object(t, r.body)
				if keys(m) != "chat_template,default_generation_settings,total_slots" || m["chat_template"] == "" {
					t.Errorf("/props %s", r.body)
				}
			}},
			{"GET", "/.well-known/serviceinfo", nil, 200, func(t *testing.T, r reply) {
				if sw, _ := object(t, r.body)["software"].(map[string]any); sw["name"] != "TabbyAPI" {
					t.Errorf("serviceinfo %s", r.body)
				}
			}},
			{"GET", "/v1/sampling/overrides", nil, 200, func(t *testing.T, r reply) {
				if keys(object(t, r.body)) != "overrides,presets,selected_preset" {
					t.Errorf("overrides %s", r.body)
				}
			}},
			{"GET", "/v1/model", nil, 200, func(t *testing.T, r reply) {
				if m := object(t, r.body); m["owned_by"] != "tabbyAPI" || m["id"] != "simulated-qwen3.gguf" {
					t.Errorf("/v1/model %s", r.body)
				}
			}},
			{"POST", "/v1/token/encode", []byte(`{"text":"hello world"}`), 200, func(t *testing.T, r reply) {
				m := object(t, r.body)
				if num(m["length"]) != float64(len(m["tokens"].([]any))) || num(m["length"]) == 0 {
					t.Errorf("/v1/token/encode %s", r.body)
				}
			}},
			missing("GET", "/slots"), missing("POST", "/apply-template"), missing("POST", "/tokenize"), missing("GET", "/v1/status"),
		}},
	}
	for _, c := range cases {
		t.Run(c.dialect, func(t *testing.T) {
			t.Parallel()
			url := startAs(t, c.dialect, nil)
			probes := c.probes
			if c.dialect != DialectOllama {
				probes = append(probes, probe{"GET", "/health", nil, 200, nil})
			}
			for _, p := range probes {
				r := call(t, p.method, url+p.path, p.body)
				if r.status != p.status {
					t.Errorf("%s %s: %d, want %d: %s", p.method, p.path, r.status, p.status, r.body)
					continue
				}
				if r.header.Get(dialect.SimulatorHeaderName) != Version() {
					t.Errorf("%s %s: %s %q", p.method, p.path, dialect.SimulatorHeaderName, r.header.Get(dialect.SimulatorHeaderName))
				}
				if c.dialect == DialectIKLlama && r.header.Get("Server") != "ik_llama.cpp" {
					t.Errorf("%s %s: Server %q", p.method, p.path, r.header.Get("Server"))
				}
				if p.check != nil {
					p.check(t, r)
				}
			}
		})
	}
}

func firstMessages(t *testing.T, id string) any {
	b, _ := prompts.Bundle()
	f, err := b.Fixture(id)
	if err != nil {
		t.Fatal(err)
	}
	return f.Messages
}

func mustJSON(t *testing.T, v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestLoadingHealth: /health answers 503 while loading in every dialect
// but Strata's, whose /health always answers 200 and says loaded false
// (serve/server.py @452325a9 Handler.do_GET /health), and Ollama's, which
// serves no /health and answers nothing until it serves (server/routes.go
// @fb30760 Serve).
func TestLoadingHealth(t *testing.T) {
	t.Parallel()
	for _, d := range Dialects() {
		url := startAs(t, d, func(c *Config) { c.LoadTime = 1 << 40 })
		if d == DialectOllama {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			req, _ := http.NewRequestWithContext(ctx, "GET", url+"/api/version", nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_ = resp.Body.Close() // its answer is the failure
				t.Errorf("ollama answered %d while loading", resp.StatusCode)
			}
			cancel()
			continue
		}
		r := call(t, "GET", url+"/health", nil)
		want := 503
		if d == DialectStrata {
			want = 200
			if m := object(t, r.body); m["loaded"] != false || m["service"] != "strata" {
				t.Errorf("strata: /health while loading %s", r.body)
			}
		}
		if r.status != want || r.header.Get(dialect.SimulatorHeaderName) == "" {
			t.Errorf("%s: /health %d while loading (want %d), header %q", d, r.status, want, r.header.Get(dialect.SimulatorHeaderName))
		}
	}
}

// TestEngineStream: one bundle request streamed in each dialect has that
// engine's reasoning field, role chunk, usage chunk and timers.
func TestEngineStream(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dialect   string
		reasoning string // the delta's reasoning field
		role      bool   // a first chunk with role assistant
		usageKeys string
		check     func(t *testing.T, evs []map[string]any, usage map[string]any)
	}{
		// vllm/entrypoints/generate/base/protocol.py @022e555d (delta.reasoning);
		// serving.py @006c49d4 (usage chunk, choices [], exclude_none);
		// generate/base/serving.py build_per_request_timing_metrics and
		// docs/features/per_request_metrics.md @0377ba9a (metrics).
		{DialectVLLM, "reasoning", true, "completion_tokens,completion_tokens_details,prompt_tokens,prompt_tokens_details,total_tokens",
			func(t *testing.T, evs []map[string]any, usage map[string]any) {
				last := evs[len(evs)-1]
				if choice0(last) != nil {
					t.Errorf("usage chunk choices %v", last["choices"])
				}
				m := last["metrics"].(map[string]any)
				if keys(m) != "generation_time_ms,mean_itl_ms,queue_time_ms,time_to_first_token_ms,tokens_per_second" {
					t.Errorf("metrics keys %s", keys(m))
				}
				n := num(usage["completion_tokens"])
				ttft, gen := num(m["time_to_first_token_ms"]), num(m["generation_time_ms"])
				if ttft <= 0 || gen <= 0 || math.Abs(num(m["mean_itl_ms"])-gen/(n-1)) > 1e-6 {
					t.Errorf("metrics %v", m)
				}
				if tps := num(m["tokens_per_second"]); math.Abs(tps-n/((ttft+gen)/1000)) > 0.05*tps {
					t.Errorf("tokens_per_second %v, want about %v", tps, n/((ttft+gen)/1000))
				}
				if num(usage["completion_tokens_details"].(map[string]any)["reasoning_tokens"]) != 4 ||
					keys(usage["prompt_tokens_details"]) != "cached_tokens" {
					t.Errorf("usage %v", usage)
				}
			}},
		// python/sglang/srt/entrypoints/openai/protocol.py @004c82e0 (UsageInfo,
		// reasoning_content); serving_chat.py @002897c2 (finish chunk);
		// usage_processor.py @056c7ec2 (details null when nothing cached).
		{DialectSGLang, "reasoning_content", true, "completion_tokens,prompt_tokens,prompt_tokens_details,reasoning_tokens,total_tokens",
			func(t *testing.T, evs []map[string]any, usage map[string]any) {
				if usage["prompt_tokens_details"] != nil || num(usage["reasoning_tokens"]) != 4 {
					t.Errorf("usage %v", usage)
				}
				fin := evs[len(evs)-2]
				if c := choice0(fin); c["finish_reason"] != "stop" || delta(fin)["content"] != nil {
					t.Errorf("finish chunk %v", fin)
				}
				for _, ev := range evs {
					if _, ok := ev["timings"]; ok {
						t.Errorf("timings in %v", ev)
					}
				}
			}},
		// ollama openai/openai.go @fb30760 (v0.32.15; toChunk: fp_ollama,
		// delta.reasoning, content always a string, role in the first delta
		// only; FinishChunk: an empty delta; ToUsage: three counts) and
		// middleware/openai.go @fb30760 ChatWriter.writeResponse (no chunk
		// for the empty trailer; usage on a chunk of choices [] after the
		// finish chunk).
		{DialectOllama, "reasoning", true, "completion_tokens,prompt_tokens,total_tokens",
			func(t *testing.T, evs []map[string]any, usage map[string]any) {
				for i, ev := range evs {
					if ev["system_fingerprint"] != "fp_ollama" || ev["created"] != evs[0]["created"] {
						t.Errorf("chunk %d without fp_ollama or the stream's one created: %v", i, ev)
					}
					_, role := delta(ev)["role"]
					if i > 0 && role {
						t.Errorf("role in delta %d: %v", i, ev)
					}
					if _, ok := delta(ev)["content"].(string); i < len(evs)-2 && !ok {
						t.Errorf("content chunk %d without a content string: %v", i, ev)
					}
				}
				fin := evs[len(evs)-2]
				if c := choice0(fin); c["finish_reason"] != "stop" || len(delta(fin)) != 0 {
					t.Errorf("finish chunk %v, want an empty delta", fin)
				}
				for _, ev := range evs[:len(evs)-2] {
					if choice0(ev)["finish_reason"] != nil {
						t.Errorf("finish_reason before the finish chunk: %v", ev)
					}
				}
				if last := evs[len(evs)-1]; choice0(last) != nil {
					t.Errorf("usage chunk choices %v", last["choices"])
				}
			}},
		// ik_llama.cpp examples/server/server-task.cpp @8337e4c (usage only on
		// the final chunk since #2189, 0a4e10c7f; cached_tokens since #1647,
		// 7b6507dda); server-context.cpp (timings without cache_n).
		{DialectIKLlama, "reasoning_content", true, "completion_tokens,prompt_tokens,prompt_tokens_details,total_tokens",
			func(t *testing.T, evs []map[string]any, usage map[string]any) {
				last := evs[len(evs)-1]
				if choice0(last) != nil || keys(usage["prompt_tokens_details"]) != "cached_tokens" {
					t.Errorf("usage chunk %v", last)
				}
				fin := evs[len(evs)-2]
				if choice0(fin)["finish_reason"] != "stop" {
					t.Errorf("finish chunk %v", fin)
				}
				for _, ev := range evs[:len(evs)-1] {
					if _, ok := ev["usage"]; ok {
						t.Errorf("usage before the final chunk: %v", ev)
					}
				}
				tm := last["timings"].(map[string]any)
				if keys(tm) != "n_ctx,n_past,predicted_ms,predicted_n,predicted_per_second,predicted_per_token_ms,prompt_ms,prompt_n,prompt_per_second,prompt_per_token_ms" {
					t.Errorf("timings keys %s", keys(tm))
				}
				if num(tm["prompt_n"]) != num(usage["prompt_tokens"]) || num(tm["predicted_n"]) != num(usage["completion_tokens"]) || num(tm["predicted_ms"]) <= 0 {
					t.Errorf("timings %v usage %v", tm, usage)
				}
			}},
		// LM Studio: 1_developer/3_openai-compat/chat-completions.md @51c92c69
		// documents no stream shape; reasoning_content as third-party clients
		// read it.
		{DialectLMStudio, "reasoning_content", true, "completion_tokens,prompt_tokens,total_tokens", nil},
		// theroyallab/tabbyAPI endpoints/OAI/utils/chat_completion.py @e632af4
		// (no role, finish_reason on the usage chunk); endpoints/OAI/types/common.py
		// @e632af4 l.9–19 (UsageStats: eight keys, no prompt_tokens_details);
		// backends/exllamav3/model.py @004e8374 (rounding, "Indeterminate").
		{DialectTabbyAPI, "reasoning_content", false,
			"completion_time,completion_tokens,completion_tokens_per_sec,prompt_time,prompt_tokens,prompt_tokens_per_sec,total_time,total_tokens",
			func(t *testing.T, evs []map[string]any, usage map[string]any) {
				last := evs[len(evs)-1]
				if c := choice0(last); c == nil || c["finish_reason"] != "stop" || keys(c["delta"]) != "" {
					t.Errorf("usage chunk choices %v", last["choices"])
				}
				for _, ev := range evs[:len(evs)-1] {
					if choice0(ev)["finish_reason"] != nil {
						t.Errorf("finish_reason before the usage chunk: %v", ev)
					}
				}
				pt := num(usage["prompt_time"])
				if pt <= 0 || math.Abs(pt*100-math.Round(pt*100)) > 1e-9 {
					t.Errorf("prompt_time %v, want rounded to 0.01 s", pt)
				}
				want := math.Round(num(usage["prompt_tokens"])/pt*100) / 100
				if num(usage["prompt_tokens_per_sec"]) != want || num(usage["completion_time"]) <= 0 {
					t.Errorf("usage %v (prompt rate want %v)", usage, want)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.dialect, func(t *testing.T) {
			t.Parallel()
			url := startAs(t, c.dialect, nil)
			r := call(t, "POST", url+"/v1/chat/completions", fixtureBody(t, "warmup", nil))
			if r.status != 200 || r.header.Get(dialect.SimulatorHeaderName) != Version() {
				t.Fatalf("%d %v %s", r.status, r.header, r.body)
			}
			evs := events(t, r.body)
			first := delta(evs[0])
			if hasRole := first["role"] == "assistant"; hasRole != c.role {
				t.Errorf("first delta %v: role chunk %v, want %v", first, hasRole, c.role)
			}
			if c.dialect == DialectTabbyAPI {
				for _, ev := range evs {
					if _, ok := delta(ev)["role"]; ok {
						t.Errorf("tabbyAPI delta with role: %v", ev)
					}
				}
			}
			var reasoning, content strings.Builder
			for _, ev := range evs {
				d := delta(ev)
				for _, other := range []string{"reasoning", "reasoning_content"} {
					if v, ok := d[other].(string); ok && v != "" {
						if other != c.reasoning {
							t.Fatalf("reasoning in delta.%s, want delta.%s: %v", other, c.reasoning, d)
						}
						reasoning.WriteString(v)
					}
				}
				if v, ok := d["content"].(string); ok {
					content.WriteString(v)
				}
			}
			if reasoning.Len() == 0 || content.Len() == 0 {
				t.Errorf("reasoning %q content %q", reasoning.String(), content.String())
			}
			usage, _ := evs[len(evs)-1]["usage"].(map[string]any)
			if keys(usage) != c.usageKeys {
				t.Errorf("usage keys %s, want %s", keys(usage), c.usageKeys)
			}
			if num(usage["prompt_tokens"]) != 30 || num(usage["completion_tokens"]) != 10 || num(usage["total_tokens"]) != 40 {
				t.Errorf("usage counts %v", usage)
			}
			if c.check != nil {
				c.check(t, evs, usage)
			}
		})
	}
}

// TestOllamaStreamBeforeV0326: an Ollama before v0.32.6 (openai/openai.go
// @00988753 ToChunk, middleware/openai.go there) puts role in every delta
// and finish_reason on its last chunk, the trailer's {role, content ""};
// usage follows on a chunk of choices [].
func TestOllamaStreamBeforeV0326(t *testing.T) {
	t.Parallel()
	url := startAs(t, DialectOllama, func(c *Config) { c.OllamaVersion = "0.32.5" })
	r := call(t, "POST", url+"/v1/chat/completions", fixtureBody(t, "warmup", nil))
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	evs := events(t, r.body)
	for i, ev := range evs[:len(evs)-1] {
		if delta(ev)["role"] != "assistant" {
			t.Errorf("delta %d without role: %v", i, ev)
		}
	}
	fin := evs[len(evs)-2]
	if d := delta(fin); choice0(fin)["finish_reason"] != "stop" || d["content"] != "" || len(d) != 2 {
		t.Errorf("finish chunk %v, want the trailer {role, content \"\"} with stop", fin)
	}
	if last := evs[len(evs)-1]; choice0(last) != nil || last["usage"] == nil {
		t.Errorf("usage chunk %v", last)
	}
}

// TestEngineToolCall: a tool case's call is streamed as fragments (vLLM,
// SGLang, ik_llama.cpp, LM Studio) or whole in one delta (Ollama,
// TabbyAPI), and the stream finishes with tool_calls.
func TestEngineToolCall(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dialect string
		whole   bool
	}{
		{DialectVLLM, false},     // vllm/entrypoints/generate/base/protocol.py @022e555d DeltaToolCall
		{DialectSGLang, false},   // python/sglang/srt/entrypoints/openai/protocol.py @004c82e0 ToolCall
		{DialectOllama, true},    // ollama openai/openai.go @00988753 ToToolCalls (whole arguments)
		{DialectIKLlama, false},  // ik_llama.cpp examples/server/server-task.cpp @04786943
		{DialectLMStudio, false}, // LM Studio: undocumented; OpenAI fragments
		{DialectTabbyAPI, true},  // tabbyAPI endpoints/OAI/utils/chat_completion.py @0158fb48 _chat_stream_collector
	}
	for _, c := range cases {
		t.Run(c.dialect, func(t *testing.T) {
			t.Parallel()
			url := startAs(t, c.dialect, nil)
			r := call(t, "POST", url+"/v1/chat/completions", fixtureBody(t, "sanity-T1", nil))
			evs := events(t, r.body)
			var calls []map[string]any
			var args, finish string
			for _, ev := range evs {
				if tc, ok := delta(ev)["tool_calls"].([]any); ok && tc != nil {
					call := tc[0].(map[string]any)
					calls = append(calls, call)
					args += call["function"].(map[string]any)["arguments"].(string)
				}
				if f, ok := choice0(ev)["finish_reason"].(string); ok {
					finish = f
				}
			}
			var parsed map[string]any
			if len(calls) == 0 || json.Unmarshal([]byte(args), &parsed) != nil || parsed["id"] != "A-17" || len(parsed) != 1 || finish != "tool_calls" {
				t.Fatalf("calls %v args %q finish %q", calls, args, finish)
			}
			if whole := len(calls) == 1; whole != c.whole {
				t.Errorf("%d tool-call deltas, whole %v want %v", len(calls), whole, c.whole)
			}
			first := calls[0]
			if first["id"] == nil || first["type"] != "function" || first["function"].(map[string]any)["name"] != "lookup_record" {
				t.Errorf("first tool-call delta %v", first)
			}
			if c.dialect == DialectTabbyAPI {
				// With include_usage the call's chunk keeps finish_reason null and
				// the usage chunk carries tool_calls.
				last := evs[len(evs)-1]
				if choice0(last)["finish_reason"] != "tool_calls" || last["usage"] == nil {
					t.Errorf("usage chunk %v", last)
				}
			}
		})
	}
}

// TestEngineOptions: each option off (or the older engine on) changes the
// wire as that engine does.
func TestEngineOptions(t *testing.T) {
	t.Parallel()
	off, on := false, true
	cases := []struct {
		name    string
		dialect string
		edit    func(*Config)
		extra   map[string]any
		check   func(t *testing.T, r reply)
	}{
		// vllm serving.py @006c49d4: no metrics without
		// --enable-per-request-metrics; no prompt_tokens_details without
		// --enable-prompt-tokens-details (exclude_none omits them).
		{"vllm without metrics and prompt details", DialectVLLM, func(c *Config) {
			c.VLLMPerRequestMetrics, c.VLLMPromptTokensDetails = &off, &off
		}, nil, func(t *testing.T, r reply) {
			evs := events(t, r.body)
			last := evs[len(evs)-1]
			if _, ok := last["metrics"]; ok {
				t.Errorf("metrics with the option off: %v", last)
			}
			if keys(last["usage"]) != "completion_tokens,completion_tokens_details,prompt_tokens,total_tokens" {
				t.Errorf("usage %v", last["usage"])
			}
		}},
		{"vllm options off by scenario", DialectVLLM, func(c *Config) {
			c.Scenario.VLLMPerRequestMetrics, c.Scenario.VLLMPromptTokensDetails = &off, &off
		}, nil, func(t *testing.T, r reply) {
			evs := events(t, r.body)
			if last := evs[len(evs)-1]; last["metrics"] != nil || keys(last["usage"]) != "completion_tokens,completion_tokens_details,prompt_tokens,total_tokens" {
				t.Errorf("usage chunk %v", last)
			}
		}},
		// tabbyAPI endpoints/OAI/types/common.py @035269c0: the three counts.
		{"older tabbyAPI", DialectTabbyAPI, func(c *Config) { c.TabbyAPINoTimings = true }, nil, func(t *testing.T, r reply) {
			evs := events(t, r.body)
			if u := evs[len(evs)-1]["usage"]; keys(u) != "completion_tokens,prompt_tokens,total_tokens" {
				t.Errorf("usage %v", u)
			}
		}},
		// backends/exllamav3/model.py @004e8374: prompt_time rounds to 0 →
		// "Indeterminate".
		{"tabbyAPI with an instant prefill", DialectTabbyAPI, func(c *Config) { c.PromptTPS = 1e9 }, nil, func(t *testing.T, r reply) {
			evs := events(t, r.body)
			u := evs[len(evs)-1]["usage"].(map[string]any)
			if u["prompt_time"] != 0.0 || u["prompt_tokens_per_sec"] != "Indeterminate" {
				t.Errorf("usage %v", u)
			}
		}},
		// sglang http_server.py @0025436e validation_exception_handler (400);
		// body as in router-for-me/CLIProxyAPI#1572.
		{"older sglang refuses xhigh", DialectSGLang, func(c *Config) { c.Scenario.SGLangRejectXHigh = &on }, map[string]any{"reasoning_effort": "xhigh"},
			func(t *testing.T, r reply) {
				want := `{"object":"error","message":"1 validation error for ChatCompletionRequest\nreasoning_effort\n  Input should be 'low', 'medium' or 'high' [type=literal_error, input_value='xhigh', input_type=str]","type":"Bad Request","param":null,"code":400}`
				if r.status != 400 || strings.TrimSpace(string(r.body)) != want {
					t.Errorf("%d %s", r.status, r.body)
				}
			}},
		{"current sglang takes xhigh", DialectSGLang, nil, map[string]any{"reasoning_effort": "xhigh"}, func(t *testing.T, r reply) {
			if r.status != 200 {
				t.Errorf("%d %s", r.status, r.body)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := startAs(t, c.dialect, c.edit)
			c.check(t, call(t, "POST", url+"/v1/chat/completions", fixtureBody(t, "warmup", c.extra)))
		})
	}
}

// TestSGLangCachedTokens: a repeated prompt reports its cached tokens in
// prompt_tokens_details (usage_processor.py @056c7ec2 _details_if_cached).
func TestSGLangCachedTokens(t *testing.T) {
	t.Parallel()
	url := startAs(t, DialectSGLang, nil)
	body := fixtureBody(t, "warmup", nil)
	call(t, "POST", url+"/v1/chat/completions", body)
	evs := events(t, call(t, "POST", url+"/v1/chat/completions", body).body)
	u := evs[len(evs)-1]["usage"].(map[string]any)
	if d, _ := u["prompt_tokens_details"].(map[string]any); num(d["cached_tokens"]) != 29 {
		t.Errorf("usage %v", u)
	}
}

// TestIKSlotsEcho: ik_llama.cpp's /slots echoes the resolved settings flat,
// named as ik reads them (server-context.cpp @0192b22b
// get_formated_generation: repeat_penalty, no repetition_penalty).
func TestIKSlotsEcho(t *testing.T) {
	t.Parallel()
	url := startAs(t, DialectIKLlama, nil)
	call(t, "POST", url+"/v1/chat/completions", fixtureBody(t, "warmup", map[string]any{"repeat_penalty": 1.1}))
	var slots []map[string]any
	if err := json.Unmarshal(call(t, "GET", url+"/slots", nil).body, &slots); err != nil || len(slots) != 1 {
		t.Fatal(err, slots)
	}
	s := slots[0]
	if s["repeat_penalty"] != 1.1 || s["temperature"] != 0.6 || num(s["top_k"]) != 20 || num(s["max_tokens"]) != 128 || num(s["n_predict"]) != -1 {
		t.Errorf("slot %v", s)
	}
	if _, ok := s["repetition_penalty"]; ok {
		t.Errorf("slot has repetition_penalty")
	}
}

// TestLlamaCppMarkedByHeader: the llama.cpp dialect carries the simulator
// header too, next to its /props marker, and its stream is unchanged.
func TestLlamaCppMarkedByHeader(t *testing.T) {
	t.Parallel()
	url := startAs(t, DialectLlamaCpp, func(c *Config) { c.Build = DefaultBuild })
	r := call(t, "GET", url+"/props", nil)
	if r.header.Get(dialect.SimulatorHeaderName) != Version() || object(t, r.body)["strata_simulator"] != true || r.header.Get("Server") != "strata-simulator" {
		t.Errorf("%v %s", r.header, r.body)
	}
	evs := events(t, call(t, "POST", url+"/v1/chat/completions", fixtureBody(t, "warmup", nil)).body)
	if d := delta(evs[0]); keys(d) != "content,role" || d["content"] != nil {
		t.Errorf("role chunk %v", evs[0])
	}
	if tm := evs[len(evs)-1]["timings"]; !strings.Contains(keys(tm), "cache_n") {
		t.Errorf("timings %v", tm)
	}
}
