package tokenizer

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/strata-bench/strata/internal/sharedpath"
)

// prompt16K is the rendered performance-prompt-16k-r1 from the
// chat-template vectors (16,384 tokens).
func prompt16K(b *testing.B) string {
	data, err := os.ReadFile(sharedpath.Path(b, "vectors", "chat-template-qwen3.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range splitLines(data) {
		var v struct {
			Name     string `json:"name"`
			Rendered string `json:"rendered"`
		}
		if json.Unmarshal(line, &v) == nil && v.Name == "performance-prompt-16k-r1" {
			return v.Rendered
		}
	}
	b.Fatal("performance-prompt-16k-r1 not in the vectors")
	return ""
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := 0
		for i < len(data) && data[i] != '\n' {
			i++
		}
		out = append(out, data[:i])
		if i < len(data) {
			i++
		}
		data = data[i:]
	}
	return out
}

func benchEncode(b *testing.B, noCache bool) {
	tok := qwen(b)
	text := prompt16K(b)
	tok.noCache = noCache
	defer func() { tok.noCache = false }()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		ids, err := tok.Encode(text)
		if err != nil {
			b.Fatal(err)
		}
		if len(ids) != 16384 {
			b.Fatalf("%d ids", len(ids))
		}
	}
}

// BenchmarkEncode16K: steady state, with the pre-token cache warm.
func BenchmarkEncode16K(b *testing.B) { benchEncode(b, false) }

// BenchmarkEncode16KNoCache: every pre-token merged from bytes.
func BenchmarkEncode16KNoCache(b *testing.B) { benchEncode(b, true) }

func BenchmarkLoadTokenizerJSON(b *testing.B) {
	path := sharedpath.Path(b, "tokenizer", "qwen3", "tokenizer.json")
	for range b.N {
		if _, err := LoadJSON(path); err != nil {
			b.Fatal(err)
		}
	}
}
