package resulttest

import (
	"bytes"
	"encoding/json"
	"testing"
)

// EditJSON rewrites a JSON document through edit, keeping numbers as
// written and markup unescaped (so the document itself carries it): a
// hand edit of a result's file.
func EditJSON(tb testing.TB, data []byte, edit func(map[string]any)) []byte {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		tb.Fatalf("%v", err)
	}
	edit(doc)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}
