package strictjson_test

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/strata-bench/strata/internal/strictjson"
)

// TestOpenList: an array opens (the decoder then inside it), null is no
// list, and any other value, or none, is an error.
func TestOpenList(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in       string
		list     bool
		err      string
		nextKind jsontext.Kind
	}{
		{`[1,2]`, true, "", '0'},
		{`[]`, true, "", ']'},
		{`null`, false, "", 0},
		{`{"a":[]}`, false, "a JSON {, not a list", 0},
		{`"[]"`, false, "a JSON string, not a list", 0},
		{``, false, "EOF", 0},
	} {
		dec := jsontext.NewDecoder(strings.NewReader(c.in))
		list, err := strictjson.OpenList(dec)
		if list != c.list || (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, %v; want %v, %q", c.in, list, err, c.list, c.err)
		}
		if list && dec.PeekKind() != c.nextKind {
			t.Errorf("%q: next %v, want %v", c.in, dec.PeekKind(), c.nextKind)
		}
	}
}
