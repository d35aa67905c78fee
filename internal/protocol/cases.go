package protocol

// The construction text of the frozen fixtures and the twelve sanity checks,
// word for word from the spec's "Frozen fixtures" and "Twelve sanity checks".

// ShortTask is the short performance prompt (also warm-up and concurrency).
const ShortTask = "Explain how a hash table finds a value, including collisions and one small example."

// RecordQuestion is appended after the records of the long performance prompts.
const RecordQuestion = "Summarize the structure of these records and explain how to look up a record by its ID."

// RecordFormat is one record line without its LF; %06d is the one-based ID.
const RecordFormat = "record%06d: alpha beta gamma delta epsilon zeta eta theta."

// CasePrefixFormat prefixes every user message; %s is the request ID.
const CasePrefixFormat = "[case %s]\n"

// Size names which record payload a long case uses.
type Size string

// The payload sizes.
const (
	Size4K  Size = "4k"
	Size16K Size = "16k"
)

// SizeCase maps a payload size to the performance case whose target it has.
func SizeCase(s Size) string {
	if s == Size16K {
		return CasePrompt16K
	}
	return CasePrompt4K
}

// Insertion is a retrieval fact inserted before zero-based record index
// floor(Percent * record_count / 100).
type Insertion struct {
	Percent int
	Line    string
	Key     string
	Value   string
}

// ExpectKind says how a sanity answer is scored.
type ExpectKind string

// The kinds of expected result: exact text, one strict JSON value, one
// structured tool call.
const (
	ExpectExact    ExpectKind = "exact_text"
	ExpectJSON     ExpectKind = "json"
	ExpectToolCall ExpectKind = "tool_call"
)

// Expectation is the required result of a sanity case. For exact text,
// Text; for JSON, JSON (the literal, whose number forms matter); for a tool
// call, Function and Arguments (a JSON object literal).
type Expectation struct {
	Kind      ExpectKind
	Text      string
	JSON      string
	Function  string
	Arguments string
}

// ToolParam is one property of a mock function's object schema.
type ToolParam struct {
	Name string
	Type string // "string", "number" or "integer"
}

// SanityCase is one of the twelve checks.
type SanityCase struct {
	ID       string
	Category Category
	// Task is the user text for instruction and tool cases.
	Task string
	// Retrieval cases: the payload size, the insertions and the question.
	Size       Size
	Insertions []Insertion
	Question   string
	// Tool cases: the one function exposed.
	Function string
	Params   []ToolParam
	Expect   Expectation
}

// SanityDefinitions returns the twelve checks in run order.
func SanityDefinitions() []SanityCase {
	return []SanityCase{
		{ID: "I1", Category: CategoryInstruction,
			Task:   "Return only a JSON object with ok set to true and count set to the integer 3. No other keys.",
			Expect: Expectation{Kind: ExpectJSON, JSON: `{"ok":true,"count":3}`}},
		{ID: "I2", Category: CategoryInstruction,
			Task:   "Sort these integers in ascending order and remove duplicates: 9, 2, -4, 2, 1. Return only a JSON array.",
			Expect: Expectation{Kind: ExpectJSON, JSON: `[-4,1,2,9]`}},
		{ID: "I3", Category: CategoryInstruction,
			Task:   "Project: Orion. Build: 17. Return only a JSON object with keys project (string) and build (integer).",
			Expect: Expectation{Kind: ExpectJSON, JSON: `{"project":"Orion","build":17}`}},
		{ID: "I4", Category: CategoryInstruction,
			Task:   "Reply with exactly the word READY in uppercase and nothing else.",
			Expect: Expectation{Kind: ExpectExact, Text: "READY"}},
		{ID: "R1", Category: CategoryRetrieval, Size: Size4K,
			Insertions: []Insertion{{Percent: 10, Line: "access_code = ORBIT-731", Key: "access_code", Value: "ORBIT-731"}},
			Question:   "What is access_code? Reply only with its value.",
			Expect:     Expectation{Kind: ExpectExact, Text: "ORBIT-731"}},
		{ID: "R2", Category: CategoryRetrieval, Size: Size4K,
			Insertions: []Insertion{{Percent: 50, Line: "storage_label = CEDAR-284", Key: "storage_label", Value: "CEDAR-284"}},
			Question:   "What is storage_label? Reply only with its value.",
			Expect:     Expectation{Kind: ExpectExact, Text: "CEDAR-284"}},
		{ID: "R3", Category: CategoryRetrieval, Size: Size16K,
			Insertions: []Insertion{{Percent: 90, Line: "archive_code = DELTA-906", Key: "archive_code", Value: "DELTA-906"}},
			Question:   "What is archive_code? Reply only with its value.",
			Expect:     Expectation{Kind: ExpectExact, Text: "DELTA-906"}},
		{ID: "R4", Category: CategoryRetrieval, Size: Size16K,
			Insertions: []Insertion{
				{Percent: 10, Line: "north = N-124", Key: "north", Value: "N-124"},
				{Percent: 90, Line: "south = S-875", Key: "south", Value: "S-875"},
			},
			Question: "Return only a JSON object containing north and south and their values.",
			Expect:   Expectation{Kind: ExpectJSON, JSON: `{"north":"N-124","south":"S-875"}`}},
		{ID: "T1", Category: CategoryToolCall,
			Task: "Use lookup_record to look up record A-17.", Function: "lookup_record",
			Params: []ToolParam{{"id", "string"}},
			Expect: Expectation{Kind: ExpectToolCall, Function: "lookup_record", Arguments: `{"id":"A-17"}`}},
		{ID: "T2", Category: CategoryToolCall,
			Task: "Use get_weather for Zagreb in celsius.", Function: "get_weather",
			Params: []ToolParam{{"city", "string"}, {"unit", "string"}},
			Expect: Expectation{Kind: ExpectToolCall, Function: "get_weather", Arguments: `{"city":"Zagreb","unit":"celsius"}`}},
		{ID: "T3", Category: CategoryToolCall,
			Task: "Use convert_units to convert 3 km to m.", Function: "convert_units",
			Params: []ToolParam{{"value", "number"}, {"from_unit", "string"}, {"to_unit", "string"}},
			Expect: Expectation{Kind: ExpectToolCall, Function: "convert_units", Arguments: `{"value":3,"from_unit":"km","to_unit":"m"}`}},
		{ID: "T4", Category: CategoryToolCall,
			Task: "Use get_build_status for project Orion, build 17.", Function: "get_build_status",
			Params: []ToolParam{{"project", "string"}, {"build", "integer"}},
			Expect: Expectation{Kind: ExpectToolCall, Function: "get_build_status", Arguments: `{"project":"Orion","build":17}`}},
	}
}
