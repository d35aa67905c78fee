package validate

import (
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/strata-bench/strata/internal/contract"
)

// TestNumbersNoEngineGives: a folder whose evidence
// and record agree on an engine number no engine can give (a prompt time
// of 1e-300 ms or of 1e308 ms, a completion count of 2^63-1 on a request capped at 2048,
// a decode time of 0 for 88 tokens, a prompt count of 2^63-1 for a fixture
// of 4085 tokens) is rejected, by the bound measure
// holds the runner to.
func TestNumbersNoEngineGives(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	// sanity-R1 (request 14): in no summary, so its record is the whole
	// of what an edit of its numbers changes.
	const id, i = "sanity-R1", 14
	request := func(doc map[string]any) map[string]any {
		q := doc["requests"].([]any)[i].(map[string]any)
		if q["id"] != id {
			t.Fatalf("request %d is %v", i, q["id"])
		}
		return q
	}
	outputs := func(f fstest.MapFS, old, new string) {
		t.Helper()
		lines := strings.Split(string(f[contract.OutputsFile].Data), "\n")
		for n, l := range lines {
			if strings.Contains(l, `"request_id":"`+id+`"`) && strings.Contains(l, old) {
				lines[n] = strings.Replace(l, old, new, 1)
				f[contract.OutputsFile].Data = []byte(strings.Join(lines, "\n"))
				return
			}
		}
		t.Fatalf("no %s in the line of %s", old, id)
	}
	for _, c := range []struct {
		name   string
		mutate func(*testing.T, fstest.MapFS)
		ptr    string
		says   string
	}{
		{"a prompt time of 1e-300 ms", func(t *testing.T, f fstest.MapFS) {
			outputs(f, `"prompt_ms":0.816`, `"prompt_ms":1e-300`)
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				q := request(doc)
				at(q, "timings")["prompt_s"] = json.Number("1e-303")
				at(q, "metrics")["prompt_tps"] = json.Number("4.08e306")
			})
		}, "/requests/14/timings/prompt_s", "impossible engine evidence: the engine reported a prompt time of 1e-303 s for 4080 tokens"},
		{"a prompt time of 1e308 ms", func(t *testing.T, f fstest.MapFS) {
			outputs(f, `"prompt_ms":0.816`, `"prompt_ms":1e308`)
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				q := request(doc)
				at(q, "timings")["prompt_s"] = json.Number("1e305")
				at(q, "metrics")["prompt_tps"] = json.Number("4.08e-302")
			})
		}, "/requests/14/timings/prompt_s", "impossible engine evidence: the engine reported a prompt time of 1e+305 s, longer than the request timeout (1800 s)"},
		{"a completion count of 2^63-1", func(t *testing.T, f fstest.MapFS) {
			outputs(f, `"completion_tokens":88`, `"completion_tokens":9223372036854775807`)
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				q := request(doc)
				at(q, "tokens")["output_tokens"] = json.Number("9223372036854775807")
				q["token_accounting_note"] = "API output_tokens (9223372036854775807) and the engine's decode_tokens (88) differ; the rate uses the engine's count for its own timer"
				delete(at(doc, "missing"), "/requests/14/token_accounting_note")
			})
		}, "/requests/14/tokens/output_tokens", "impossible engine evidence: output_tokens (9223372036854775807) exceeds the request's max_tokens (2048)"},
		{"a prompt count of 2^63-1", func(t *testing.T, f fstest.MapFS) {
			outputs(f, `"prompt_tokens":4085`, `"prompt_tokens":9223372036854775807`)
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				at(request(doc), "tokens")["input_tokens"] = json.Number("9223372036854775807")
			})
		}, "/requests/14/tokens/input_tokens", "impossible engine evidence: input_tokens (9223372036854775807) exceeds 4 x the fixture's frozen input_tokens (4085) + 1024"},
		{"a decode time of 0 for 88 tokens", func(t *testing.T, f fstest.MapFS) {
			outputs(f, `"predicted_ms":0.748`, `"predicted_ms":0`)
			editJSON(t, f, contract.ResultsFile, func(doc map[string]any) {
				q := request(doc)
				at(q, "timings")["decode_s"] = json.Number("0")
				at(q, "tokens")["decode_tokens"] = json.Number("0")
				at(q, "metrics")["decode_tps"] = nil
				at(q, "sources")["decode_tokens"] = "derived: timings.predicted_per_second x timings.predicted_ms / 1000 (timings.predicted_n disagrees)"
				q["token_accounting_note"] = "timings.predicted_n (88) disagrees with predicted_per_second x predicted_ms/1000 (0.000) beyond 0.05 x decode_s + 1; decode_tokens is the count the rate implies (0); the raw timings are kept in outputs.jsonl; " +
					"API output_tokens (88) and the engine's decode_tokens (0) differ; the rate uses the engine's count for its own timer"
				m := at(doc, "missing")
				delete(m, "/requests/14/token_accounting_note")
				m["/requests/14/metrics/decode_tps"] = "decode_tokens is 0"
				for _, e := range at(doc, "extensions", "energy")["requests"].([]any) {
					if e := e.(map[string]any); e["request_id"] == id {
						e["decode_tokens_per_joule"] = json.Number("0")
					}
				}
			})
		}, "/requests/14/timings/decode_s", "is 0; timings.predicted_ms in outputs.jsonl gives null"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := folder(t, "baseline")
			c.mutate(t, f)
			mustCatch(t, f, b, c.ptr, c.says)
		})
	}
}
