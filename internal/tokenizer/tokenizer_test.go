package tokenizer

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/strata-bench/strata/internal/sharedpath"
)

var (
	qwenOnce sync.Once
	qwenTok  *Tokenizer
	qwenErr  error
)

func qwen(t testing.TB) *Tokenizer {
	t.Helper()
	path := sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json")
	qwenOnce.Do(func() { qwenTok, qwenErr = LoadJSON(path) })
	if qwenErr != nil {
		t.Fatal(qwenErr)
	}
	return qwenTok
}

type vector struct {
	Case string `json:"case"`
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

func readVectors(t testing.TB) []vector {
	f, err := os.Open(sharedpath.Path(t, "vectors", "tokenizer-qwen3.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	var out []vector
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var v vector
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVectors requires every line of the reference vectors to match exactly.
func TestVectors(t *testing.T) {
	t.Parallel()
	tok := qwen(t)
	vs := readVectors(t)
	if len(vs) != 348 {
		t.Fatalf("read %d vectors, want 348", len(vs))
	}
	bad := 0
	for i, v := range vs {
		got, err := tok.Encode(v.Text)
		if err != nil {
			t.Errorf("line %d (%s): %v", i+1, v.Case, err)
			continue
		}
		if !slices.Equal(got, v.IDs) {
			bad++
			if bad <= 10 {
				t.Errorf("line %d (%s) %q:\n got %v\nwant %v", i+1, v.Case, v.Text, head(got), head(v.IDs))
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d vectors differ", bad, len(vs))
	}
}

func head(ids []int) []int {
	if len(ids) > 40 {
		return ids[:40]
	}
	return ids
}
