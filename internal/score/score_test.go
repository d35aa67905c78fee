package score

import (
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
)

func expectations() map[string]*fixtures.Expected {
	out := map[string]*fixtures.Expected{}
	for _, c := range protocol.SanityDefinitions() {
		e := &fixtures.Expected{Category: c.Category, Kind: c.Expect.Kind}
		switch c.Expect.Kind {
		case protocol.ExpectExact:
			e.Value = []byte(`"` + c.Expect.Text + `"`)
		case protocol.ExpectJSON:
			e.Value = []byte(c.Expect.JSON)
		case protocol.ExpectToolCall:
			e.Function, e.Arguments = c.Expect.Function, []byte(c.Expect.Arguments)
		}
		out[c.ID] = e
	}
	return out
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	exp := expectations()
	ok := func(answer string) Response { return Response{Status: Completed, Answer: answer} }
	call := func(name, args string) Response {
		return Response{Status: Completed, ToolCalls: []Call{{Name: name, Arguments: args}}}
	}
	cases := []struct {
		id     string
		r      Response
		pass   bool
		reason string
	}{
		{"I1", ok(`{"ok":true,"count":3}`), true, ""},
		{"I1", ok("  {\"count\": 3, \"ok\": true}\n"), true, ""}, // key order irrelevant
		{"I1", ok(`{"ok":true,"count":3.0}`), false, "float"},    // 3 is not 3.0
		{"I1", ok(`{"ok":1,"count":3}`), false, "integer"},       // true is not 1
		{"I1", ok(`{"ok":true,"count":"3"}`), false, "string"},
		{"I1", ok(`{"ok":true,"count":3,"extra":null}`), false, "extra key"},
		{"I1", ok(`{"ok":true}`), false, "lacks the key"},
		{"I1", ok(`{"ok":true,"count":3,"count":3}`), false, "malformed"}, // duplicate keys
		{"I1", ok(`{"ok":true,"count":3,"x":{"a":1,"a":2}}`), false, "malformed"},
		{"I1", ok("```json\n{\"ok\":true,\"count\":3}\n```"), false, "malformed"},
		{"I1", ok(`Here it is: {"ok":true,"count":3}`), false, "malformed"},
		{"I1", ok(`{"ok":true,"count":3} done`), false, "malformed"},
		{"I1", ok(`{"ok":true,"count":3}{"ok":true,"count":3}`), false, "malformed"},
		{"I1", ok(``), false, "malformed"},
		{"I1", ok(`{"ok":true,"count":3e0}`), false, "float"},
		{"I2", ok(`[-4,1,2,9]`), true, ""},
		{"I2", ok(`[-4, 1, 2, 9]`), true, ""},
		{"I2", ok(`[1,2,9,-4]`), false, "wrong answer"},
		{"I2", ok(`[-4,1,2,2,9]`), false, "items"},
		{"I3", ok(`{"project":"Orion","build":17}`), true, ""},
		{"I3", ok(`{"project":"Orion","build":"17"}`), false, "string"},
		{"I3", ok(`{"project":"orion","build":17}`), false, "wrong answer"},
		{"I4", ok("READY"), true, ""},
		{"I4", ok(" \n\tREADY \r\n"), true, ""},
		{"I4", ok("ready"), false, "wrong answer"},
		{"I4", ok("READY."), false, "wrong answer"},
		{"I4", ok("\u00a0READY"), false, "wrong answer"}, // NBSP is not ASCII whitespace
		{"I4", ok("**READY**"), false, "wrong answer"},
		{"R1", ok("ORBIT-731"), true, ""},
		{"R1", ok("access_code = ORBIT-731"), false, "wrong answer"},
		{"R4", ok(`{"south":"S-875","north":"N-124"}`), true, ""},
		{"R4", ok(`{"north":"N-124"}`), false, "lacks"},
		{"T1", call("lookup_record", `{"id": "A-17"}`), true, ""},
		{"T1", call("lookup_record", "{\n\t\"id\":\"A-17\"\n}"), true, ""},
		{"T1", call("lookup_record", `{"id": "A-17", "verbose": true}`), false, "extra key"},
		{"T1", call("lookup_record", `{"id": "A-`), false, "malformed"},
		{"T1", call("lookup_record", `{"id": "A-17", "id": "A-17"}`), false, "malformed"},
		{"T1", call("lookup", `{"id": "A-17"}`), false, "called"},
		{"T1", call("lookup_record", `["A-17"]`), false, "not a JSON object"},
		{"T1", ok(`<tool_call>{"name": "lookup_record", "arguments": {"id": "A-17"}}</tool_call>`), false, "no structured tool call"},
		{"T1", Response{Status: Completed, Answer: "Sure.", ToolCalls: []Call{{"lookup_record", `{"id":"A-17"}`}}}, true, ""}, // text beside it is ignored
		{"T1", Response{Status: Completed, ToolCalls: []Call{{"lookup_record", `{"id":"A-17"}`}, {"lookup_record", `{"id":"A-17"}`}}}, false, "exactly one"},
		{"T3", call("convert_units", `{"value": 3, "from_unit": "km", "to_unit": "m"}`), true, ""},
		{"T3", call("convert_units", `{"value": 3.0, "from_unit": "km", "to_unit": "m"}`), false, "float"},
		{"T4", call("get_build_status", `{"project": "Orion", "build": 17}`), true, ""},
		{"T4", call("get_build_status", `{"project": "Orion", "build": "17"}`), false, "string"},
		{"T1", Response{Status: Truncated, ToolCalls: []Call{{"lookup_record", `{"id": "A-17"}`}}}, false, "truncated"},
		{"I4", Response{Status: Failed, Reason: "stream_error: boom"}, false, "request failed: stream_error"},
		{"I4", Response{Status: Skipped, Reason: "the warm-up failed"}, false, "skipped: the warm-up failed"},
	}
	for i, c := range cases {
		v := Evaluate(exp[c.id], c.r)
		if v.Passed != c.pass {
			t.Errorf("case %d (%s %+v): passed %v, want %v (%s)", i, c.id, c.r, v.Passed, c.pass, v.Reason)
		}
		if v.Reason == "" || !strings.Contains(v.Reason, c.reason) {
			t.Errorf("case %d (%s): reason %q lacks %q", i, c.id, v.Reason, c.reason)
		}
		if v.Category != exp[c.id].Category {
			t.Errorf("case %d: category %s", i, v.Category)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1,2.0,"x",null,true]`, `{"a":{"a":1,"a":2}}`, "```json\n1\n```"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse([]byte(s))
		if err == nil && Diff(v, v) != "" {
			t.Fatalf("a value differs from itself: %s", s)
		}
	})
}
