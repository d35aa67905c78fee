package corpus

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/sharedpath"
	"github.com/strata-bench/strata/internal/tokenizer"
)

var (
	buildOnce sync.Once
	built     *Bundle
	buildErr  error
	builtIn   Inputs
)

func qwenInputs(t testing.TB) Inputs {
	tokPath := sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json")
	tmplPath := sharedpath.Path(t, "tokenizer", "qwen3", "chat_template.jinja")
	tok, err := tokenizer.Load(tokPath)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := chattemplate.Load(context.Background(), tmplPath)
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := SourceOf(context.Background(), tokPath)
	ms, _ := SourceOf(context.Background(), tmplPath)
	return Inputs{ProtocolID: protocol.StandInID, BundleName: protocol.StandInBundleName, Tokenizer: tok, Template: tmpl, TokenizerSources: []Source{ts}, TemplateSource: ms}
}

func bundle(t testing.TB) *Bundle {
	t.Helper()
	sharedpath.Path(t, "tokenizer", "qwen3") // each test fails on its own without the shared folder
	buildOnce.Do(func() {
		builtIn = qwenInputs(t)
		built, buildErr = Build(context.Background(), builtIn)
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	if built == nil {
		t.Fatal("the bundle could not be built: see the first test that tried")
	}
	return built
}

func byID(b *Bundle, id string) *fixtures.Fixture {
	for _, f := range b.Fixtures {
		if f.RequestID == id {
			return f
		}
	}
	return nil
}

func committedDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "bench", "prompts", protocol.StandInBundleName)
}

// TestMatchesVectors: the benchmark requests in the chat-template vectors
// were built by an independent script from the spec's words; our fixtures
// must carry the same messages and tools and the same token counts.
func TestMatchesVectors(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	f, err := os.Open(sharedpath.Path(t, "vectors", "chat-template-qwen3.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // only read
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	seen := 0
	for sc.Scan() {
		var v struct {
			Name       string          `json:"name"`
			Messages   json.RawMessage `json:"messages"`
			Tools      json.RawMessage `json:"tools"`
			TokenCount int             `json:"token_count"`
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		fx := byID(b, v.Name)
		if fx == nil {
			continue
		}
		seen++
		msgs, _ := json.Marshal(fx.Messages)
		if !jsonEqual(t, msgs, v.Messages) {
			t.Errorf("%s: messages differ from the vector", v.Name)
		}
		if !jsonEqual(t, fx.Tools, v.Tools) {
			t.Errorf("%s: tools differ from the vector:\n%s\n%s", v.Name, fx.Tools, v.Tools)
		}
		if fx.InputTokens != v.TokenCount {
			t.Errorf("%s: input_tokens %d, vector token_count %d", v.Name, fx.InputTokens, v.TokenCount)
		}
	}
	if seen != 13 {
		t.Errorf("matched %d benchmark vectors, want 13", seen)
	}
}

// jsonEqual compares two JSON texts after compacting (key order matters).
func jsonEqual(t *testing.T, a, b []byte) bool {
	var ca, cb bytes.Buffer
	if err := json.Compact(&ca, a); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&cb, b); err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

func TestConstruction(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	if len(b.Fixtures) != 34 {
		t.Fatalf("%d fixtures, want 34", len(b.Fixtures))
	}
	n4, n16 := b.Records[protocol.Size4K].Records, b.Records[protocol.Size16K].Records
	if n4 != 225 || n16 != 908 {
		t.Errorf("record counts %d/%d, want 225/908 with this tokenizer", n4, n16)
	}
	for _, f := range b.Fixtures {
		c := f.Messages[0].Content
		if prefix := fmt.Sprintf("[case %s]\n", f.RequestID); !strings.HasPrefix(c, prefix) {
			t.Errorf("%s: content does not start with %q", f.RequestID, prefix)
		}
		if len(f.Messages) != 1 || f.Messages[0].Role != "user" {
			t.Errorf("%s: want exactly one user message (no system prompt)", f.RequestID)
		}
		if (f.ToolChoice != nil) != strings.HasPrefix(f.CaseID, "T") || (string(f.Tools) != "null") != strings.HasPrefix(f.CaseID, "T") {
			t.Errorf("%s: tools and tool_choice only on T1-T4", f.RequestID)
		}
		if strings.HasSuffix(c, "\n") {
			t.Errorf("%s: trailing newline", f.RequestID)
		}
	}
	// Retrieval: the fact stands before zero-based record index floor(f*N).
	for _, tc := range []struct {
		id    string
		line  string
		index int
	}{
		{"sanity-R1", "access_code = ORBIT-731", n4 * 10 / 100},
		{"sanity-R2", "storage_label = CEDAR-284", n4 * 50 / 100},
		{"sanity-R3", "archive_code = DELTA-906", n16 * 90 / 100},
		{"sanity-R4", "north = N-124", n16 * 10 / 100},
		{"sanity-R4", "south = S-875", n16 * 90 / 100},
	} {
		lines := strings.Split(byID(b, tc.id).Messages[0].Content, "\n")
		want := fmt.Sprintf(protocol.RecordFormat, tc.index+1) // the record at that index
		for i, l := range lines {
			if l == tc.line {
				if i+1 >= len(lines) || lines[i+1] != want {
					t.Errorf("%s: %q is followed by %q, want record index %d (%q)", tc.id, tc.line, lines[i+1], tc.index, want)
				}
			}
		}
	}
	// Concurrency seeds: 4*(r-1)+j.
	if f := byID(b, "concurrency-r3-c2"); f.Seed != 10 || *f.Round != 3 || *f.Client != 2 {
		t.Errorf("concurrency-r3-c2: seed %d round %d client %d", f.Seed, *f.Round, *f.Client)
	}
	// The longest shared prefix is with some other request and short:
	// different case markers keep the user payload apart.
	for _, f := range b.Fixtures {
		if f.SharedPrefixWith == "" || f.SharedPrefixWith == f.RequestID || f.MaxSharedPrefixTokens >= f.InputTokens {
			t.Errorf("%s: shared prefix %d with %q", f.RequestID, f.MaxSharedPrefixTokens, f.SharedPrefixWith)
		}
	}
}

// TestNoFloatOrNoneReachesAFixture: the template engine prints floats and
// None differently from Python, so none may reach a rendered prompt.
func TestNoFloatOrNoneReachesAFixture(t *testing.T) {
	t.Parallel()
	for _, f := range bundle(t).Fixtures {
		msgs, _ := json.Marshal(f.Messages)
		if err := noFloatOrNull(msgs); err != nil {
			t.Errorf("%s messages: %v", f.RequestID, err)
		}
		if string(f.Tools) != "null" {
			if err := noFloatOrNull(f.Tools); err != nil {
				t.Errorf("%s tools: %v", f.RequestID, err)
			}
		}
		text, err := Render(builtIn.Template, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"None", "Undefined"} {
			if strings.Contains(text, bad) {
				t.Errorf("%s: rendered prompt contains %q", f.RequestID, bad)
			}
		}
	}
	for _, bad := range []string{`{"value": 3.0}`, `[1e5]`, `{"a": null}`} {
		if noFloatOrNull(json.RawMessage(bad)) == nil {
			t.Errorf("noFloatOrNull(%s) accepted it", bad)
		}
	}
	if err := noFloatOrNull(json.RawMessage(`{"a": [1, "x", true]}`)); err != nil {
		t.Error(err)
	}
}

// TestCommittedBundleLoads: the committed bundle verifies against the
// protocol's corpus SHA and agrees with the schedule.
func TestCommittedBundleLoads(t *testing.T) {
	t.Parallel()
	b, err := fixtures.LoadDir(committedDir(), protocol.StandIn())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Fixtures) != 34 {
		t.Fatalf("%d fixtures", len(b.Fixtures))
	}
	if got := bundle(t).SHA256; got != protocol.StandIn().CorpusSHA256 {
		t.Errorf("an in-memory build hashes to %s, the protocol says %s", got, protocol.StandIn().CorpusSHA256)
	}
}

func BenchmarkBuild(b *testing.B) {
	in := qwenInputs(b)
	b.ResetTimer()
	for range b.N {
		if _, err := Build(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildCold includes loading the tokenizer and template, as the
// command does.
func BenchmarkBuildCold(b *testing.B) {
	for range b.N {
		if _, err := Build(context.Background(), qwenInputs(b)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBuildEndsWithContext: a build, and the hash of a source, end when
// their context does (the first SIGTERM), with its cause.
func TestBuildEndsWithContext(t *testing.T) {
	t.Parallel()
	bundle(t)
	stop := errors.New("SIGTERM")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(stop)
	if _, err := Build(ctx, builtIn); !errors.Is(err, stop) {
		t.Errorf("Build: got %v, want the context's cause", err)
	}
	if _, err := SourceOf(ctx, sharedpath.Path(t, "tokenizer", "qwen3", "tokenizer.json")); !errors.Is(err, context.Canceled) {
		t.Errorf("SourceOf: got %v, want the context's error", err)
	}
}
