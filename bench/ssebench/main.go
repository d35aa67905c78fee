// Command ssebench measures strata's streaming client against a loopback
// server: chunk throughput side by side with what a Python runner does
// (http.client reading lines, json.loads per chunk), and the latency the
// client itself adds to TTFT. scripts/bench.sh runs it.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/strata-bench/strata/internal/client"
	"github.com/strata-bench/strata/internal/dialect"
)

// chunk is a content delta shaped like llama-server's (about 280 bytes).
const chunk = `data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":" token"}}],"created":1796063214,"id":"chatcmpl-VWsvo9Rz73MDzbbDIFTM6YIwaqXgMOr4","model":"/srv/ai/llm-models/tiny-qwen3-rand-clean.gguf","system_fingerprint":"b9928-81ff7ab","object":"chat.completion.chunk"}` + "\n\n"

const tail = `data: {"choices":[{"finish_reason":"length","index":0,"delta":{}}],"created":1796063214,"id":"chatcmpl-x","model":"m","system_fingerprint":"b9928-81ff7ab","object":"chat.completion.chunk"}` + "\n\n" +
	`data: {"choices":[],"created":1796063214,"id":"chatcmpl-x","model":"m","object":"chat.completion.chunk","usage":{"completion_tokens":200000,"prompt_tokens":30,"total_tokens":200030},"timings":{"cache_n":0,"prompt_n":30,"prompt_ms":3.1,"predicted_n":200000,"predicted_ms":1000.0,"predicted_per_second":200000.0}}` + "\n\n" +
	"data: [DONE]\n\n"

func main() {
	// The client reads at most client.MaxEvents (65,536) events of one
	// stream: a stream to be read to its end stays below that bound.
	n := flag.Int("chunks", 60000, "chunks per stream")
	runs := flag.Int("runs", 3, "streams per client (the best is reported)")
	ttftRuns := flag.Int("ttft-requests", 300, "requests for the added-TTFT measurement")
	python := flag.String("python", "python3", "Python interpreter for the comparison (empty: skip)")
	flag.Parse()

	body := []byte(strings.Repeat(chunk, *n) + tail)
	var mu sync.Mutex
	var firstWrite time.Time
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// A failed write is the client's error, which is checked.
		_, _ = w.Write(body)
	})
	// /ttft writes the headers, waits, notes the instant, writes one delta.
	mux.HandleFunc("/ttft/v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		firstWrite = time.Now()
		mu.Unlock()
		// A failed write is the client's error, which is checked.
		_, _ = w.Write([]byte(chunk))
		w.(http.Flusher).Flush()
		_, _ = w.Write([]byte(tail))
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Serve returns only when the listener fails, and then every request
	// fails, which the measurements check.
	go func() { _ = http.Serve(ln, mux) }()
	base := "http://" + ln.Addr().String()

	fmt.Printf("stream: %d llama.cpp-shaped chunks (%.1f MB) over loopback\n", *n, float64(len(body))/1e6)
	best := 0.0
	for range *runs {
		c := client.New(client.Options{BaseURL: base})
		start := time.Now()
		o, _, _ := c.Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
		d := time.Since(start)
		if o.Error != nil || len(o.Answer) != 6**n {
			fmt.Fprintf(os.Stderr, "strata client: %+v (%d bytes of answer)\n", o.Error, len(o.Answer))
			os.Exit(1)
		}
		best = max(best, float64(*n)/d.Seconds())
	}
	fmt.Printf("strata client (SSE reader, strict chunk parsing, deltas, trace): %10.0f chunks/s\n", best)
	if *python != "" {
		script := `
import http.client, json, sys, time
host, port = sys.argv[1], int(sys.argv[2])
best = 0
for _ in range(int(sys.argv[3])):
    c = http.client.HTTPConnection(host, port)
    t0 = time.monotonic()
    c.request("POST", "/v1/chat/completions", body=b"{}", headers={"Content-Type": "application/json"})
    r = c.getresponse()
    n = 0
    text = []
    for line in r:
        line = line.strip()
        if not line.startswith(b"data: "):
            continue
        data = line[6:]
        if data == b"[DONE]":
            break
        obj = json.loads(data)
        for ch in obj.get("choices") or []:
            d = ch.get("delta") or {}
            if d.get("content"):
                text.append(d["content"])
        n += 1
    best = max(best, n / (time.monotonic() - t0))
print(int(best))
`
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		out, err := exec.Command(*python, "-c", script, host, port, fmt.Sprint(*runs)).Output()
		var py float64
		if err == nil {
			_, err = fmt.Sscan(string(bytes.TrimSpace(out)), &py)
		}
		if err != nil {
			fmt.Printf("python: not measured (%v)\n", err)
		} else {
			fmt.Printf("python http.client + json.loads per chunk:                   %10.0f chunks/s\n", py)
			fmt.Printf("ratio: %.1fx\n", best/py)
		}
	}

	// Added TTFT: the client's first-delta time minus the server's write
	// instant, both on this process's monotonic clock.
	var added []float64
	c := client.New(client.Options{BaseURL: base + "/ttft"})
	for range *ttftRuns {
		start := time.Now()
		o, _, _ := c.Chat(context.Background(), dialect.Wire{}, []byte(`{}`), nil)
		if o.Error != nil || o.TTFT == nil {
			fmt.Fprintf(os.Stderr, "ttft request: %+v\n", o.Error)
			os.Exit(1)
		}
		mu.Lock()
		w := firstWrite.Sub(start).Seconds()
		mu.Unlock()
		added = append(added, (*o.TTFT-w)*1000)
	}
	sort.Float64s(added)
	fmt.Printf("client-added TTFT over %d requests: median %.3f ms, p90 %.3f ms, max %.3f ms\n",
		len(added), added[len(added)/2], added[len(added)*9/10], added[len(added)-1])
}
