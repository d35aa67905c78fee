package contract

// owned is a tree of JSON paths whose string values are protocol-owned:
// IDs, enums, hashes, the fixed source names, and the request bodies built
// from the fixtures. The redactor never rewrites them (a hash is not an AWS
// key, "performance-short-r1" is not the user "short"). "*" matches any
// name or index; a nil subtree means everything below.
type owned map[string]owned

var all owned // nil: the whole subtree

var resultsOwned = owned{
	"format":        all,
	"protocol":      all,
	"run":           {"id": all, "started_at": all, "status": all},
	"software":      {"strata_commit": all, "runner_commit": all, "build_kind": all},
	"model":         {"files": {"*": {"sha256": all}}},
	"configuration": {"track": all, "template": all, "sampling": all, "chat_template_kwargs": all},
	"requests": {"*": {"id": all, "phase": all, "case_id": all, "status": all, "finish_reason": all, "first_delta_kind": all,
		// A verdict's reason is derived from the already redacted evidence;
		// redacting it again (its answer quoted, escapes and all) could
		// change it from what report derives.
		"sources": all, "evaluation": {"category": all, "reason": all}, "error": {"kind": all}}},
	"summaries": {"*": {"phase": all, "case_id": all, "metric": all, "unit": all, "included_request_ids": all,
		"excluded": {"*": {"request_id": all}}}},
	"concurrency_rounds": {"*": {"request_ids": all}},
	"artifacts":          all,
	"extensions":         {"fixtures": all, "engine_dialect": {"reasoning_budget": {"field": all}}},
}

// ownedBody is a request body: built from the fixtures and the profile,
// all protocol-owned but the model it names (Ollama's /api/chat needs
// one), which is the user's name for it and is redacted as the recorded
// dialect's model and the server's model list are, so the validator
// rebuilds the same bytes from them.
var ownedBody = owned{"*": all, "model": {}}

var outputsOwned = owned{
	"request_id": all, "status": all, "request": ownedBody, "finish_reason": all, "first_delta_kind": all,
	"dispatched_at": all, "events": all, "error": {"kind": all}, "tool_calls": {"*": {"id": all, "type": all}},
}

func (o owned) owns(path []string) bool {
	node := o
	for _, seg := range path {
		next, ok := node[seg]
		if !ok {
			next, ok = node["*"]
		}
		if !ok {
			return false
		}
		if next == nil {
			return true
		}
		node = next
	}
	return false
}

// ProtocolOwned says, for a file of a result folder, whether the JSON string
// at a path is protocol-owned (nil for files with nothing of the kind).
func ProtocolOwned(file string) func(path []string) bool {
	switch file {
	case "results.json":
		return resultsOwned.owns
	case "outputs.jsonl":
		return outputsOwned.owns
	}
	return nil
}
