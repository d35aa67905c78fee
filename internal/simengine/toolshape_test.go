package simengine

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/sharedpath"
	"github.com/strata-bench/strata/internal/tokenizer"
)

// bundleTool is a bundle fixture's tool: {"type": "function", "function":
// {name, description, parameters}}, its function object also kept as the
// bundle wrote it.
type bundleTool struct {
	Type     string
	Function struct {
		Name        string          `json:"name"`
		Description *string         `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	raw json.RawMessage
}

// shapeCounts are the prompt token counts an engine gives the embedded
// bundle's requests when it hands the chat template shape(tool) for each
// of a fixture's tools, measured as it makes them: the bundle's template
// rendered with the profile's kwargs and the real Qwen3 tokenizer
// (../shared/tokenizer/qwen3) counting the text. Fixtures without tools
// render as the bundle froze them.
func shapeCounts(t *testing.T, shape func(bundleTool) any) map[string]int {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := prompts.Template(b)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chattemplate.Parse(string(src))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, id := range b.SortedIDs() {
		f := b.Fixtures[id]
		out[id] = f.InputTokens
		if !f.OffersTools() {
			continue
		}
		var tools []struct {
			Type     string          `json:"type"`
			Function json.RawMessage `json:"function"`
		}
		if err := json.Unmarshal(f.Tools, &tools); err != nil {
			t.Fatalf("%s: tools %s: %v", id, f.Tools, err)
		}
		var shaped []any
		for _, tl := range tools {
			bt := bundleTool{Type: tl.Type, raw: tl.Function}
			if tl.Type != "function" || json.Unmarshal(tl.Function, &bt.Function) != nil {
				t.Fatalf("%s: a tool that is not {type: function, function}: %s", id, f.Tools)
			}
			shaped = append(shaped, shape(bt))
		}
		msgs, err := json.Marshal(f.Messages)
		if err != nil {
			t.Fatal(err)
		}
		toolsJSON, err := json.Marshal(shaped)
		if err != nil {
			t.Fatal(err)
		}
		text, err := tmpl.Render(corpus.PromptInput(msgs, toolsJSON))
		if err != nil {
			t.Fatal(err)
		}
		ids, err := tok.Encode(text)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = len(ids)
	}
	return out
}

// strataCounts are the counts of Strata's server: each tool handed to the
// template as its inner function object (frontend.py openai_to_messages,
// t.get("function", t)).
func strataCounts(t *testing.T) map[string]int {
	t.Helper()
	return shapeCounts(t, func(tl bundleTool) any { return tl.raw })
}

// sglangCounts are the counts of SGLang @004c82e0: each tool handed to the
// template as Tool.model_dump() (serving_chat.py _process_messages), in
// the pydantic models' field order of protocol.py at that commit: Tool's
// type, function and defer_loading (None, kept), Function's description,
// name, parameters and strict (False; its defer_loading, None, dropped).
func sglangCounts(t *testing.T) map[string]int {
	t.Helper()
	type function struct {
		Description *string         `json:"description"`
		Name        string          `json:"name"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	}
	type tool struct {
		Type         string   `json:"type"`
		Function     function `json:"function"`
		DeferLoading *bool    `json:"defer_loading"`
	}
	return shapeCounts(t, func(tl bundleTool) any {
		return tool{Type: tl.Type, Function: function{tl.Function.Description, tl.Function.Name, tl.Function.Parameters, false}}
	})
}

// TestSGLangCountsItsToolDump: the simulated SGLang counts a tool case as
// the real one does, more tokens than the bundle froze (its model_dump
// adds "strict" and "defer_loading"), in its chat usage and its
// /v1/tokenize of the same body alike; a fixture without tools, and a tool
// case's messages sent without its tools, count as frozen.
func TestSGLangCountsItsToolDump(t *testing.T) {
	t.Parallel()
	want := sglangCounts(t)
	b, _ := prompts.Bundle()
	url := startAs(t, DialectSGLang, func(c *Config) { c.PromptTPS, c.DecodeTPS = 1e7, 1e7 })
	tools := 0
	for _, id := range b.SortedIDs() {
		fx := b.Fixtures[id]
		if !fx.OffersTools() {
			continue
		}
		tools++
		if want[id] <= fx.InputTokens {
			t.Errorf("%s: SGLang's rendering counts %d, the bundle froze %d", id, want[id], fx.InputTokens)
		}
	}
	if tools != 4 {
		t.Fatalf("%d tool fixtures, want T1-T4", tools)
	}
	for _, id := range []string{"sanity-T1", "sanity-T2", "sanity-T3", "sanity-T4", "warmup"} {
		body := fixtureBody(t, id, nil)
		evs := events(t, call(t, "POST", url+"/v1/chat/completions", body).body)
		usage, _ := evs[len(evs)-1]["usage"].(map[string]any)
		if int(num(usage["prompt_tokens"])) != want[id] {
			t.Errorf("%s: chat prompt_tokens %v, want %d", id, usage["prompt_tokens"], want[id])
		}
		r := call(t, "POST", url+"/v1/tokenize", body)
		if m := object(t, r.body); r.status != 200 || int(num(m["count"])) != want[id] {
			t.Errorf("%s: /v1/tokenize %d %s, want count %d", id, r.status, r.body, want[id])
		}
	}
	noTools := []byte(fmt.Sprintf(`{"model":"m","messages":%s}`, mustJSON(t, firstMessages(t, "sanity-T1"))))
	if m := object(t, call(t, "POST", url+"/v1/tokenize", noTools).body); int(num(m["count"])) != b.Fixtures["sanity-T1"].InputTokens {
		t.Errorf("T1's messages without its tools: count %v, want the frozen %d", m["count"], b.Fixtures["sanity-T1"].InputTokens)
	}
}
