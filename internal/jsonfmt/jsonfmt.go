// Package jsonfmt is the one JSON layout strata writes for files people read
// and hash: two-space indentation, no HTML escaping, one trailing newline.
// Byte-stable output matters: bundles are rebuilt byte for byte and
// manifests and results are hashed.
package jsonfmt

import (
	"bytes"
	"encoding/json"
)

// Indent encodes v in strata's file layout.
func Indent(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
