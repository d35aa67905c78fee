package dialect

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
)

// TestStrataVersion: engine_version is the version in /props build_info
// ("Strata 0.1.41" → 0.1.41), else /v1/status engine — which is what
// answers while /props says 503 (serve/server.py @452325a9 Handler._props)
// — and Strata's mock engine (engine null, no build_info) names none.
func TestStrataVersion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, health, props, status string
		version, source             string
	}{
		{"build_info", "", `{"build_info":"Strata 0.1.41"}`, `{"service":"strata","engine":"0.1.40"}`, "0.1.41", "/props build_info"},
		{"/props 503", `{"status":"ok","service":"strata"}`, "", `{"service":"strata","engine":"0.1.41"}`, "0.1.41", "/v1/status engine"},
		{"mock engine", "", `{"total_slots":1}`, `{"service":"strata","engine":null}`, "", ""},
		{"key refused everywhere but /health", `{"status":"ok","api_key":true,"service":"strata"}`, "", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev := contract.ServerEvidence{Health: raw(c.health), Props: raw(c.props), Status: raw(c.status)}
			d := Identify(ev)
			if d.Engine != StrataServer {
				t.Fatalf("identified as %+v", d)
			}
			v, src := EngineVersion(ev, d)
			if v != c.version || src != c.source || d.Version != c.version {
				t.Errorf("version %q from %q (dialect %q), want %q from %q", v, src, d.Version, c.version, c.source)
			}
		})
	}
	// llama.cpp's version stays its whole build_info.
	ev := contract.ServerEvidence{Props: raw(`{"build_info":"b10470-34af94cd9"}`)}
	if v, src := EngineVersion(ev, Identify(ev)); v != "b10470-34af94cd9" || src != "/props build_info" {
		t.Errorf("llama.cpp: %q from %q", v, src)
	}
}

// TestAnthropicCount: a fixture's chat body becomes the count_tokens body
// Strata's frontend reads the same conversation from (frontend.py
// anthropic_to_messages: system, messages, tools as input_schema,
// output_config.effort, thinking disabled), and what that shape cannot
// say is refused, never guessed.
func TestAnthropicCount(t *testing.T) {
	t.Parallel()
	chat := `{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],
		"tools":[{"type":"function","function":{"name":"lookup_record","description":"Look up","parameters":{"type":"object"}}}],
		"tool_choice":"auto","reasoning_effort":"xhigh","chat_template_kwargs":{"enable_thinking":true,"preserve_thinking":true},
		"stream":true,"max_tokens":64,"seed":7}`
	got, err := AnthropicCount([]byte(chat))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"system":"Be brief.","messages":[{"role":"user","content":"Hi"}],"tools":[{"name":"lookup_record","description":"Look up","input_schema":{"type":"object"}}],"output_config":{"effort":"xhigh"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	off, err := AnthropicCount([]byte(`{"messages":[{"role":"user","content":"Hi"}],"chat_template_kwargs":{"enable_thinking":false}}`))
	if err != nil || !strings.Contains(string(off), `"thinking":{"type":"disabled"}`) || strings.Contains(string(off), "tools") {
		t.Errorf("thinking off: %s %v", off, err)
	}
	for _, bad := range []string{
		`{"messages":[{"role":"tool","content":"x","tool_call_id":"1"}]}`,
		`{"messages":[{"role":"assistant","content":"","tool_calls":[]}]}`,
		`{"messages":[{"role":"user","content":"a"},{"role":"system","content":"late"}]}`,
		`{"messages":[],"tools":[{"type":"retrieval"}]}`,
		`[1]`,
	} {
		if out, err := AnthropicCount([]byte(bad)); err == nil {
			t.Errorf("%s: converted to %s", bad, out)
		}
	}
	var v map[string]any
	if json.Unmarshal(got, &v) != nil {
		t.Fatal("not JSON")
	}
}
