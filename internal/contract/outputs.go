package contract

import (
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Line is the record's line of outputs.jsonl in the one form strata
// writes it (before the redactor, whose re-encoding keeps the form) and
// the validator holds a folder's lines to: encoding/json's encoding of the
// record, markup and U+2028 as they are, every string with its shortest
// escapes, no space. json v2 with v1's semantics writes that in one pass.
func (o *Output) Line() ([]byte, error) {
	return jsonv2.Marshal(o, jsonv1.DefaultOptionsV1(), jsontext.EscapeForHTML(false), jsontext.EscapeForJS(false), jsontext.PreserveRawStrings(false))
}
