package score_test

import (
	"encoding/json"
	"fmt"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/score"
)

// An exact-text case passes only on the exact answer; only surrounding
// ASCII whitespace is stripped.
func ExampleEvaluate_exactText() {
	exp := &fixtures.Expected{Category: protocol.CategoryInstruction, Kind: protocol.ExpectExact, Value: json.RawMessage(`"ORBIT-17"`)}
	for _, answer := range []string{"ORBIT-17\n", "orbit-17", "The code is ORBIT-17."} {
		v := score.Evaluate(exp, score.Response{Status: score.Completed, Answer: answer})
		fmt.Printf("%q %v %s\n", answer, v.Passed, v.Reason)
	}
	// Output:
	// "ORBIT-17\n" true the answer is exactly the required text
	// "orbit-17" false wrong answer: got "orbit-17", want "ORBIT-17"
	// "The code is ORBIT-17." false wrong answer: got "The code is ORBIT-17.", want "ORBIT-17"
}

// Strict typed JSON: one value, nothing around it, and 17 is not 17.0.
func ExampleEvaluate_json() {
	exp := &fixtures.Expected{Category: protocol.CategoryInstruction, Kind: protocol.ExpectJSON, Value: json.RawMessage(`{"project": "Orion", "build": 17}`)}
	for _, answer := range []string{
		`{"build": 17, "project": "Orion"}`,
		`{"project": "Orion", "build": 17.0}`,
		"```json\n{\"project\": \"Orion\", \"build\": 17}\n```",
	} {
		v := score.Evaluate(exp, score.Response{Status: score.Completed, Answer: answer})
		fmt.Println(v.Passed, v.Reason)
	}
	// Output:
	// true the answer is exactly the required JSON value
	// false wrong answer: $.build is float 17, want integer 17 (answer "{\"project\": \"Orion\", \"build\": 17.0}")
	// false malformed output: jsontext: invalid character '`' at start of value (answer "```json\n{\"project\": \"Orion\", \"build\": 17}\n```")
}

// A tool-call case passes on one structured call with the exact
// function and arguments; a call written as text is no call.
func ExampleEvaluate_toolCall() {
	exp := &fixtures.Expected{Category: protocol.CategoryToolCall, Kind: protocol.ExpectToolCall, Function: "lookup_record", Arguments: json.RawMessage(`{"record_id": "record000042"}`)}
	for _, r := range []score.Response{
		{Status: score.Completed, ToolCalls: []score.Call{{Name: "lookup_record", Arguments: `{"record_id":"record000042"}`}}},
		{Status: score.Completed, ToolCalls: []score.Call{{Name: "lookup_record", Arguments: `{"record_id":"record000043"}`}}},
		{Status: score.Completed, Answer: `lookup_record({"record_id": "record000042"})`},
	} {
		v := score.Evaluate(exp, r)
		fmt.Println(v.Passed, v.Reason)
	}
	// Output:
	// true one structured call to lookup_record with exactly the required arguments
	// false wrong arguments: $.record_id is "record000043", want "record000042"
	// false no structured tool call (a call described in text does not count)
}
