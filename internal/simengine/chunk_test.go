package simengine

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// TestDeltaIsTheChunk: the fast delta writer writes byte for byte what the
// general chunk writer does (key order, escaping of markup and quotes).
func TestDeltaIsTheChunk(t *testing.T) {
	t.Parallel()
	for _, d := range []map[string]any{{"content": `a<b>&"x`}, {"role": "assistant", "content": nil}, {"reasoning_content": "é\u2028"}} {
		fast, slow := httptest.NewRecorder(), httptest.NewRecorder()
		cw := func(r *httptest.ResponseRecorder) *chunkWriter {
			return &chunkWriter{w: r, fl: r, id: "chatcmpl-<1>", model: "m&x", fingerprint: "b10470-34af94cd9", created: 17}
		}
		cw(fast).delta(d)
		cw(slow).chunk([]any{map[string]any{"finish_reason": nil, "index": 0, "delta": d}}, nil)
		if fast.Body.String() != slow.Body.String() {
			t.Errorf("delta %v:\n%s\nchunk:\n%s", d, fast.Body.String(), slow.Body.String())
		}
	}
}

// TestTokensJSONIsTheEncoder: the /tokenize answer is byte for byte what
// writeJSON wrote with encoding/json, ids wrapping past the vocabulary's
// last ordinary one.
func TestTokensJSONIsTheEncoder(t *testing.T) {
	t.Parallel()
	for _, n := range []int{-1, 0, 1, 7, 151645} {
		toks := make([]int, max(n, 0))
		for i := range toks {
			toks[i] = i % 151643
		}
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(map[string]any{"tokens": toks}); err != nil {
			t.Fatal(err)
		}
		if got := tokensJSON(n); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%d tokens: %.80q…, want %.80q…", n, got, want.Bytes())
		}
	}
}
