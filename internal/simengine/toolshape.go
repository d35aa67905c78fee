package simengine

import "encoding/json"

// Some servers hand the chat template their own shape of a request's tools
// instead of the {"type": "function", "function": {name, description,
// parameters}} the bundle froze, so their chat path counts a tool case
// otherwise than the bundle while rendering everything else alike. The
// figures are per tool, counted with the Qwen3 tokenizer and the bundle's
// template on T1-T4 (TestStrataCountsTheInnerTools and
// TestSGLangCountsItsToolDump render and count each shape). vLLM hands
// the template [tool.model_dump() for tool in request.tools] too
// (vllm/renderers/online_renderer.py @01063cd0 render_chat), but its
// ChatCompletionToolsParam dumps the bundle's shape key for key (type,
// function: name, description, parameters; a None strict or
// defer_loading popped), so it counts as the bundle froze.
const (
	// strataToolWrapTokens is what Strata's server leaves out: frontend.py
	// openai_to_messages hands the template t.get("function", t), and
	// anthropic_to_messages builds the same {name, description,
	// parameters}, so Qwen3's template writes {"name": ...} where the bundle
	// froze {"type": "function", "function": {"name": ...}}: 10 tokens fewer
	// per tool (T1-T4: 174, 184, 201, 188 frozen; 164, 174, 191, 178).
	strataToolWrapTokens = 10

	// sglangToolDumpTokens is what SGLang adds: serving_chat.py
	// _process_messages hands the template [item.model_dump() for item in
	// request.tools] (sgl-project/sglang python/sglang/srt/entrypoints/
	// openai/serving_chat.py @004c82e0), and protocol.py at the same commit
	// dumps a Tool as {"type", "function": {"description", "name",
	// "parameters", "strict": false}, "defer_loading": null} (Function drops
	// its own defer_loading when None, Tool keeps it). Its /v1/tokenize
	// with messages counts the same: TokenizeRequest.to_chat_completion_request
	// makes the chat request again. 10 tokens more per tool (T1-T4: 184, 194,
	// 211, 198). Other SGLang versions dump otherwise (without defer_loading
	// +4; later ones hand a flat template such as Qwen3's
	// item.function.model_dump(), -5): the simulator speaks as @004c82e0.
	sglangToolDumpTokens = 10
)

// toolShapeTokens is how many tokens more (fewer when negative) the engine
// this server plays counts for a bundle request carrying tools (the
// request's own tools field) than the bundle froze: 0 without tools and
// for the engines that render the tools as sent.
func (s *Server) toolShapeTokens(tools json.RawMessage) int {
	per := 0
	switch s.cfg.Dialect {
	case DialectStrata:
		per = -strataToolWrapTokens
	case DialectSGLang:
		per = sglangToolDumpTokens
	}
	var list []json.RawMessage
	if per == 0 || json.Unmarshal(tools, &list) != nil {
		return 0 // absent, null or not a list: no tools reach the template
	}
	return len(list) * per
}
