package client

import (
	"bytes"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/record"
)

const benchChunk = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" token"}}],"created":1796063214,"id":"chatcmpl-VWsvo9Rz73MDzbbDIFTM6YIwaqXgMOr4","model":"/srv/ai/llm-models/tiny-qwen3-rand-clean.gguf","system_fingerprint":"b9928-81ff7ab","object":"chat.completion.chunk"}` + "\n\n"

// BenchmarkReadStream: SSE framing, strict chunk parsing, delta handling and
// the event trace, per chunk, with allocations.
func BenchmarkReadStream(b *testing.B) {
	const n = 10000
	body := []byte(strings.Repeat(benchChunk, n) +
		`data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}]}` + "\n\n" +
		`data: {"choices":[],"usage":{"completion_tokens":10000,"prompt_tokens":30}}` + "\n\ndata: [DONE]\n\n")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		o := &record.Outcome{}
		if err := readStream(bytes.NewReader(body), o, func() float64 { return 0 }, nil, nil); err != nil || o.Error != nil {
			b.Fatal(err, o.Error)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/chunk")
}
