// Package schema publishes the result contract as a JSON Schema
// (strata-standard-benchmark-1.schema.json), the first layer of the result
// validator.
package schema

import _ "embed"

// ResultsV1 is the JSON Schema of results.json, schema version 1.
//
//go:embed strata-standard-benchmark-1.schema.json
var ResultsV1 []byte

// ResultsV1Name is its file name (and the schema's $id's last part).
const ResultsV1Name = "strata-standard-benchmark-1.schema.json"
