// Package corpus builds the frozen fixture bundle exactly as the spec's
// "Frozen fixtures" construction rules say: the [case <request-id>] prefix,
// sequential record lines, retrieval facts inserted before record index
// floor(fraction * record_count), the tool schemas, the record counts whose
// rendered input is closest to 4,096 and 16,384 tokens, every request's
// frozen token count and its longest token prefix shared with any other
// request. The output is byte-for-byte deterministic.
package corpus

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/jsonfmt"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/tokenizer"
)

// Source names one input file of the build, as build.json records it: its
// base name (never a machine path) and SHA-256.
type Source struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

// Inputs are what the bundle is built from.
type Inputs struct {
	// ProtocolID is the protocol the bundle is built for (build.json
	// names it).
	ProtocolID, BundleName string
	Tokenizer              *tokenizer.Tokenizer
	Template               *chattemplate.Template
	TokenizerSources       []Source
	TemplateSource         Source
}

// Bundle is a built bundle, in memory.
type Bundle struct {
	// Files maps file names to their exact bytes, MANIFEST.sha256 included.
	Files map[string][]byte
	// SHA256 is the SHA-256 of MANIFEST.sha256.
	SHA256 string
	// Records is the chosen record count per size.
	Records map[protocol.Size]LengthChoice
	// Fixtures in schedule order.
	Fixtures []*fixtures.Fixture
}

// LengthChoice is the outcome of the record-count search for one size.
type LengthChoice struct {
	Target  int       `json:"target_tokens"`
	Records int       `json:"records"`
	Tokens  int       `json:"tokens"`
	Below   RecordsAt `json:"below"`
	Above   RecordsAt `json:"above"`
	Measure string    `json:"measured_on"`
}

// RecordsAt is the token count of the measured request at a record count.
type RecordsAt struct {
	Records int `json:"records"`
	Tokens  int `json:"tokens"`
}

// PromptInput is the chat-template input of a request as the server renders
// it: the messages, the tools (nil: none), a generation prompt, and the
// profile's kwargs (enable_thinking, preserve_thinking, reasoning_effort).
func PromptInput(messages, tools json.RawMessage) chattemplate.Input {
	kw := protocol.ProfileTemplateKwargs()
	s := protocol.ProfileSampling()
	return chattemplate.Input{
		Messages:            messages,
		Tools:               tools,
		AddGenerationPrompt: true,
		Kwargs: map[string]json.RawMessage{
			"enable_thinking":   jsonLiteral(kw.EnableThinking),
			"preserve_thinking": jsonLiteral(kw.PreserveThinking),
			"reasoning_effort":  jsonLiteral(s.ReasoningEffort),
		},
	}
}

func jsonLiteral(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only bools and strings reach here
	}
	return b
}

// builder carries one build's inputs and the token counts it has measured.
type builder struct {
	ctx     context.Context
	in      Inputs
	records map[protocol.Size]int
}

// Build builds the bundle in memory, ending when ctx does.
func Build(ctx context.Context, in Inputs) (*Bundle, error) {
	b := &builder{ctx: ctx, in: in, records: map[protocol.Size]int{}}
	out := &Bundle{Files: map[string][]byte{}, Records: map[protocol.Size]LengthChoice{}}
	for _, size := range []protocol.Size{protocol.Size4K, protocol.Size16K} {
		choice, err := b.chooseRecords(size)
		if err != nil {
			return nil, err
		}
		b.records[size] = choice.Records
		out.Records[size] = choice
	}
	ids := map[string][]int{}
	for _, req := range protocol.Schedule(true) {
		f, err := b.fixture(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", req.ID, err)
		}
		toks, err := b.tokens(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", req.ID, err)
		}
		f.InputTokens = len(toks)
		ids[req.ID] = toks
		out.Fixtures = append(out.Fixtures, f)
	}
	sharedPrefixes(out.Fixtures, ids)
	if err := checkLengths(out.Fixtures); err != nil {
		return nil, err
	}
	for _, f := range out.Fixtures {
		data, err := jsonfmt.Indent(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.RequestID, err)
		}
		out.Files[fixtures.FileName(f.RequestID)] = data
	}
	buildJSON, err := jsonfmt.Indent(b.buildInfo(out))
	if err != nil {
		return nil, err
	}
	out.Files[fixtures.BuildName] = buildJSON
	out.Files[fixtures.ManifestName] = manifest(out.Files)
	out.SHA256 = sha256Hex(out.Files[fixtures.ManifestName])
	return out, nil
}

func manifest(files map[string][]byte) []byte {
	names := make([]string, 0, len(files))
	for n := range files {
		if n != fixtures.ManifestName {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var m bytes.Buffer
	for _, n := range names {
		m.WriteString(fixtures.ManifestLine(n, files[n]))
	}
	return m.Bytes()
}

func casePrefix(requestID string) string { return fmt.Sprintf(protocol.CasePrefixFormat, requestID) }

func recordLines(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf(protocol.RecordFormat, i+1)
	}
	return lines
}

// joinLines ends every line with LF, then appends the question with no
// trailing newline.
func joinLines(lines []string, question string) string {
	var s strings.Builder
	for _, l := range lines {
		s.WriteString(l)
		s.WriteByte('\n')
	}
	s.WriteString(question)
	return s.String()
}

func longPrompt(requestID string, records int) string {
	return casePrefix(requestID) + joinLines(recordLines(records), protocol.RecordQuestion)
}

// retrievalPrompt inserts each fact before zero-based record index
// floor(percent * records / 100), indices referring to the record list
// before any insertion.
func retrievalPrompt(requestID string, records int, c protocol.SanityCase) (string, error) {
	recs := recordLines(records)
	at := map[int][]string{}
	for _, ins := range c.Insertions {
		idx := ins.Percent * records / 100
		at[idx] = append(at[idx], ins.Line)
		for _, r := range recs {
			if strings.Contains(r, ins.Key) || strings.Contains(r, ins.Value) {
				return "", fmt.Errorf("distractor record %q contains %q or %q", r, ins.Key, ins.Value)
			}
		}
	}
	var lines []string
	for i, r := range recs {
		lines = append(lines, at[i]...)
		lines = append(lines, r)
	}
	return casePrefix(requestID) + joinLines(lines, c.Question), nil
}

// toolSchema builds a mock function's tool entry with its keys in the order
// the spec lists them: type, function{name, description, parameters{type,
// properties, required, additionalProperties}}.
func toolSchema(c protocol.SanityCase) (json.RawMessage, error) {
	var props bytes.Buffer
	props.WriteByte('{')
	var required []string
	for i, p := range c.Params {
		if i > 0 {
			props.WriteByte(',')
		}
		name, _ := json.Marshal(p.Name)
		typ, _ := json.Marshal(map[string]string{"type": p.Type})
		props.Write(name)
		props.WriteByte(':')
		props.Write(typ)
		required = append(required, p.Name)
	}
	props.WriteByte('}')
	type params struct {
		Type                 string          `json:"type"`
		Properties           json.RawMessage `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties bool            `json:"additionalProperties"`
	}
	type function struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Parameters  params `json:"parameters"`
	}
	type tool struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	return json.Marshal([]tool{{Type: "function", Function: function{
		Name: c.Function, Description: protocol.ToolDescription,
		Parameters: params{Type: "object", Properties: props.Bytes(), Required: required, AdditionalProperties: false},
	}}})
}

func sanityCase(id string) (protocol.SanityCase, error) {
	for _, c := range protocol.SanityDefinitions() {
		if c.ID == id {
			return c, nil
		}
	}
	return protocol.SanityCase{}, fmt.Errorf("no sanity definition for %s", id)
}

func expected(c protocol.SanityCase) (*fixtures.Expected, error) {
	e := &fixtures.Expected{Category: c.Category, Kind: c.Expect.Kind}
	switch c.Expect.Kind {
	case protocol.ExpectExact:
		e.Value = jsonLiteral(c.Expect.Text)
	case protocol.ExpectJSON:
		e.Value = json.RawMessage(c.Expect.JSON)
	case protocol.ExpectToolCall:
		e.Function = c.Expect.Function
		e.Arguments = json.RawMessage(c.Expect.Arguments)
	default:
		return nil, fmt.Errorf("unknown expectation kind %q", c.Expect.Kind)
	}
	return e, nil
}

// fixture assembles one request's fixture (without its token counts).
func (b *builder) fixture(req protocol.Request) (*fixtures.Fixture, error) {
	f := &fixtures.Fixture{
		RequestID: req.ID, Phase: req.Phase, CaseID: req.CaseID, Repetition: req.Repetition,
		Seed: req.Seed, MaxTokens: req.Cap, Tools: json.RawMessage("null"),
	}
	if req.Phase == protocol.PhaseConcurrency {
		round, client := req.Round, req.Client
		f.Round, f.Client = &round, &client
	}
	var content string
	switch req.CaseID {
	case protocol.CaseWarmup, protocol.CaseShort, protocol.CaseShortBurst:
		content = casePrefix(req.ID) + protocol.ShortTask
	case protocol.CasePrompt4K:
		content = longPrompt(req.ID, b.records[protocol.Size4K])
	case protocol.CasePrompt16K:
		content = longPrompt(req.ID, b.records[protocol.Size16K])
	default:
		c, err := sanityCase(req.CaseID)
		if err != nil {
			return nil, err
		}
		switch c.Category {
		case protocol.CategoryRetrieval:
			if content, err = retrievalPrompt(req.ID, b.records[c.Size], c); err != nil {
				return nil, err
			}
		case protocol.CategoryToolCall:
			content = casePrefix(req.ID) + c.Task
			if f.Tools, err = toolSchema(c); err != nil {
				return nil, err
			}
			choice := protocol.ToolChoice
			f.ToolChoice = &choice
		default:
			content = casePrefix(req.ID) + c.Task
		}
		if f.Expected, err = expected(c); err != nil {
			return nil, err
		}
	}
	f.Messages = []fixtures.Message{{Role: "user", Content: content}}
	return f, nil
}

// Render renders a fixture's prompt with the template.
func Render(t *chattemplate.Template, f *fixtures.Fixture) (string, error) {
	return render(context.Background(), t, f)
}

// render is Render, ending when ctx does.
func render(ctx context.Context, t *chattemplate.Template, f *fixtures.Fixture) (string, error) {
	msgs, err := json.Marshal(f.Messages)
	if err != nil {
		return "", err
	}
	var tools json.RawMessage
	if f.OffersTools() {
		tools = f.Tools
		if err := noFloatOrNull(tools); err != nil {
			return "", fmt.Errorf("tools: %w", err)
		}
	}
	return t.RenderContext(ctx, PromptInput(msgs, tools))
}

// noFloatOrNull rejects a float literal or a null anywhere in v: the
// template engine would print either differently from Python (3.0 as 3,
// None as empty), and a fixture must render exactly as transformers does.
func noFloatOrNull(v json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch x := tok.(type) {
		case nil:
			return errors.New("a null would render as Go prints None")
		case json.Number:
			if strings.ContainsAny(x.String(), ".eE") {
				return fmt.Errorf("the float %s would render as Go prints floats", x)
			}
		}
	}
}

func (b *builder) tokens(f *fixtures.Fixture) ([]int, error) {
	text, err := render(b.ctx, b.in.Template, f)
	if err != nil {
		return nil, err
	}
	return b.in.Tokenizer.EncodeContext(b.ctx, text)
}

// count is the rendered token count of the size's performance r1 request
// with n records.
func (b *builder) count(size protocol.Size, n int) (int, error) {
	id := protocol.PerformanceID(protocol.SizeCase(size), 1)
	f := &fixtures.Fixture{RequestID: id, Tools: json.RawMessage("null"),
		Messages: []fixtures.Message{{Role: "user", Content: longPrompt(id, n)}}}
	toks, err := b.tokens(f)
	return len(toks), err
}

// chooseRecords finds the record count whose rendered performance-<case>-r1
// prompt is closest to the target (the smaller count on a tie). The count
// grows strictly with records, so the answer is one of the two counts around
// the crossing; an estimate from the per-record slope finds it in a few
// tokenizations instead of one per candidate.
func (b *builder) chooseRecords(size protocol.Size) (LengthChoice, error) {
	caseID := protocol.SizeCase(size)
	target, _ := protocol.TargetTokens(caseID)
	memo := map[int]int{}
	f := func(n int) (int, error) {
		if c, ok := memo[n]; ok {
			return c, nil
		}
		c, err := b.count(size, n)
		memo[n] = c
		return c, err
	}
	c1, err := f(1)
	if err != nil {
		return LengthChoice{}, err
	}
	c2, err := f(2)
	if err != nil {
		return LengthChoice{}, err
	}
	slope := c2 - c1
	if slope <= 0 {
		return LengthChoice{}, fmt.Errorf("%s: token count does not grow with records (%d, %d)", caseID, c1, c2)
	}
	lo := max(1, 1+(target-c1)/slope)
	// Move lo to the largest count with f(lo) <= target.
	for {
		c, err := f(lo)
		if err != nil {
			return LengthChoice{}, err
		}
		if c > target {
			if lo == 1 {
				return LengthChoice{}, fmt.Errorf("%s: one record already exceeds %d tokens", caseID, target)
			}
			lo--
			continue
		}
		next, err := f(lo + 1)
		if err != nil {
			return LengthChoice{}, err
		}
		if next <= c {
			return LengthChoice{}, fmt.Errorf("%s: token count does not grow at %d records", caseID, lo)
		}
		if next <= target {
			lo++
			continue
		}
		break
	}
	chosen := lo
	if memo[lo+1]-target < target-memo[lo] {
		chosen = lo + 1
	}
	at := func(n int) (RecordsAt, error) {
		c, err := f(n)
		return RecordsAt{Records: n, Tokens: c}, err
	}
	below, err := at(max(chosen-1, 1))
	if err != nil {
		return LengthChoice{}, err
	}
	above, err := at(chosen + 1)
	if err != nil {
		return LengthChoice{}, err
	}
	tokens := memo[chosen]
	if v := protocol.LengthRule(tokens, target); !v.Within {
		return LengthChoice{}, fmt.Errorf("%s: the closest record count (%d records, %d tokens) is %s", caseID, chosen, tokens, v.Why)
	}
	return LengthChoice{Target: target, Records: chosen, Tokens: tokens,
		Below: below, Above: above, Measure: protocol.PerformanceID(caseID, 1)}, nil
}

// sharedPrefixes sets every fixture's longest shared token prefix with any
// other request of the bundle (required and optional alike: the server may
// have seen any of them).
func sharedPrefixes(fs []*fixtures.Fixture, ids map[string][]int) {
	for i, a := range fs {
		best, with := -1, ""
		for j, o := range fs {
			if i == j {
				continue
			}
			if n := commonPrefix(ids[a.RequestID], ids[o.RequestID]); n > best {
				best, with = n, o.RequestID
			}
		}
		a.MaxSharedPrefixTokens, a.SharedPrefixWith = max(best, 0), with
	}
}

func commonPrefix(a, b []int) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// checkLengths applies the 2 % rule to every request built from the 4K or
// 16K payload (performance and retrieval alike).
func checkLengths(fs []*fixtures.Fixture) error {
	var errs []error
	for _, f := range fs {
		caseID := f.CaseID
		if f.Phase == protocol.PhaseSanity {
			c, err := sanityCase(f.CaseID)
			if err != nil {
				return err
			}
			if c.Category != protocol.CategoryRetrieval {
				continue
			}
			caseID = protocol.SizeCase(c.Size)
		}
		if target, ok := protocol.TargetTokens(caseID); ok {
			if v := protocol.LengthRule(f.InputTokens, target); !v.Within {
				errs = append(errs, fmt.Errorf("%s: %d tokens is %s", f.RequestID, f.InputTokens, v.Why))
			}
		}
	}
	return errors.Join(errs...)
}
