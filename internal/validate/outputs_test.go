package validate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/redact"
)

// TestOutputsInTheirOneForm: outputs.jsonl is read in
// the one form strata writes it, byte for byte: its lines in the order of
// the requests, each the record as strata encodes it, each ending in one
// LF. A reordered file, CRLF line ends, a line re-encoded otherwise (a
// space after a colon, markup escaped) or a missing last LF is a
// violation, with the hashes recomputed as an attacker would.
func TestOutputsInTheirOneForm(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	lines := func(f fstest.MapFS) [][]byte {
		return bytes.Split(bytes.TrimSuffix(f[contract.OutputsFile].Data, []byte("\n")), []byte("\n"))
	}
	join := func(f fstest.MapFS, ls [][]byte, sep string) {
		f[contract.OutputsFile].Data = append(bytes.Join(ls, []byte(sep)), sep...)
	}
	for _, c := range []struct {
		name   string
		mutate func(fstest.MapFS)
		ptr    string
		says   string
	}{
		{"two lines swapped", func(f fstest.MapFS) {
			ls := lines(f)
			ls[1], ls[2] = ls[2], ls[1]
			join(f, ls, "\n")
		}, "outputs.jsonl:2", "is the line of performance-prompt-4k-r1; strata writes the line of performance-short-r1 here"},
		{"CRLF line ends", func(f fstest.MapFS) { join(f, lines(f), "\r\n") }, "outputs.jsonl:1", "is not the line strata writes for warmup"},
		{"a space after a colon", func(f fstest.MapFS) {
			ls := lines(f)
			ls[3] = bytes.Replace(ls[3], []byte(`"status":`), []byte(`"status": `), 1)
			join(f, ls, "\n")
		}, "outputs.jsonl:4", "is not the line strata writes for performance-prompt-16k-r1"},
		{"a letter escaped", func(f fstest.MapFS) {
			ls := lines(f)
			ls[0] = bytes.Replace(ls[0], []byte(`"answer":"A`), []byte(`"answer":"\u0041`), 1)
			join(f, ls, "\n")
		}, "outputs.jsonl:1", "is not the line strata writes for warmup"},
		{"no LF after the last line", func(f fstest.MapFS) {
			f[contract.OutputsFile].Data = bytes.TrimSuffix(f[contract.OutputsFile].Data, []byte("\n"))
		}, "outputs.jsonl", "does not end with a line feed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := folder(t, "baseline")
			c.mutate(f)
			mustCatch(t, f, b, c.ptr, c.says)
		})
	}
}

// TestCanonicalLineIsTheWritersLine: a record with markup, U+2028, ESC,
// floats JSON writes with exponents and escapes in its raw request body,
// encoded and redacted as folder.Render writes it, is its own canonical
// line.
func TestCanonicalLineIsTheWritersLine(t *testing.T) {
	t.Parallel()
	answer, off, round := "a <b> & \u2028 \"q\" \\ é 中 \x1b", 1e-7, 1.2345678901234568e+23
	o := contract.Output{RequestID: "warmup", Status: contract.Completed, Answer: &answer, ToolCalls: []contract.OutputCall{},
		Request: json.RawMessage(`{"messages":[{"role":"user","content":"x \u003c y \u2028 \/ z"}], "n": 1.50}`),
		Usage:   json.RawMessage(`{"completion_tokens":3}`), Timings: json.RawMessage("null"), OffsetS: &off, RoundOffsetS: &round,
		Events: json.RawMessage(`[[0.1,"answer"],[1e-7,"end"]]`)}
	red := redact.New(redact.Machine{}, nil)
	written := func(line []byte, err error) []byte {
		t.Helper()
		if err == nil {
			line, err = red.JSON(line, false, contract.ProtocolOwned(contract.OutputsFile))
		}
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	line := written(o.Line())
	var back contract.Output
	if err := jsonv2.Unmarshal(line, &back, jsonv2.RejectUnknownMembers(true)); err != nil {
		t.Fatal(err)
	}
	got, err := back.Line()
	if err != nil || !bytes.Equal(got, line) {
		t.Errorf("canonical line (%v)\n%s\nthe writer's\n%s", err, got, line)
	}
	// The form is encoding/json's, the redactor's re-encoding applied.
	if v1 := written(json.Marshal(o)); !bytes.Equal(v1, line) {
		t.Errorf("encoding/json's line, redacted\n%s\nthe writer's\n%s", v1, line)
	}
	if !strings.Contains(string(line), "<b>") {
		t.Errorf("the writer escaped markup: %s", line)
	}
}
