package schema

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/protocol"
)

// TestSchemaAgreesWithTheTypes holds the JSON Schema and the Go types of
// the result contract to each other, field by field: the same object
// names, every field required, no other names allowed, the same JSON
// types, and null allowed exactly where the Go field can be nil (a
// pointer). Either written alone would drift; this test is where they
// meet.
func TestSchemaAgreesWithTheTypes(t *testing.T) {
	t.Parallel()
	var root map[string]any
	if err := json.Unmarshal(ResultsV1, &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
	a := agreement{t: t, defs: defs}
	a.check("results.json", reflect.TypeFor[contract.Results](), root)
	if a.objects < 40 { // the contract's objects and every extensions block
		t.Fatalf("only %d objects compared", a.objects)
	}
}

type agreement struct {
	t       *testing.T
	defs    map[string]any
	objects int
	// extension: an omitempty field is optional (extensions blocks leave
	// out what does not apply; the contract's objects have every field).
	extension bool
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// openObjects keep the engine's own names beside the protocol's (the
// readings: sampling and chat_template_kwargs mirror engine options).
var openObjects = map[string]bool{
	"results.json.configuration.sampling":             true,
	"results.json.configuration.chat_template_kwargs": true,
}

// resolve follows a $ref and takes a oneOf/anyOf of null and one schema
// apart: it returns the schema and whether null is allowed.
func (a *agreement) resolve(node map[string]any) (map[string]any, bool) {
	nullable := false
	for {
		if ref, ok := node["$ref"].(string); ok {
			def, _ := a.defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
			if def == nil {
				a.t.Fatalf("unresolved %s", ref)
			}
			node = def
			continue
		}
		alts, _ := node["oneOf"].([]any)
		if alts == nil {
			alts, _ = node["anyOf"].([]any)
		}
		if len(alts) == 2 {
			var other map[string]any
			for _, alt := range alts {
				m, _ := alt.(map[string]any)
				if m["type"] == "null" && len(m) == 1 {
					nullable = true
				} else {
					other = m
				}
			}
			if nullable && other != nil {
				node = other
				continue
			}
		}
		return node, nullable
	}
}

// types are the JSON types a schema allows (from type, enum or const).
func types(node map[string]any) map[string]bool {
	out := map[string]bool{}
	add := func(v any) {
		switch v := v.(type) {
		case nil:
			out["null"] = true
		case string:
			out["string"] = true
		case bool:
			out["boolean"] = true
		case float64:
			if v == float64(int64(v)) {
				out["integer"] = true
			} else {
				out["number"] = true
			}
		}
	}
	switch ty := node["type"].(type) {
	case string:
		out[ty] = true
	case []any:
		for _, x := range ty {
			out[x.(string)] = true
		}
	}
	if len(out) > 0 {
		return out
	}
	if enum, ok := node["enum"].([]any); ok {
		for _, v := range enum {
			add(v)
		}
	}
	if c, ok := node["const"]; ok {
		add(c)
	}
	return out
}

func (a *agreement) check(path string, ty reflect.Type, node map[string]any) {
	t := a.t
	node, nullable := a.resolve(node)
	allowed := types(node)
	if allowed["null"] {
		nullable = true
		delete(allowed, "null")
	}
	if ty == rawMessage || ty.Kind() == reflect.Interface {
		return // free-form (extensions, raw engine objects)
	}
	if ty.Kind() == reflect.Pointer {
		if !nullable {
			t.Errorf("%s: the Go field is a pointer (may be null), the schema does not allow null", path)
		}
		ty = ty.Elem()
	} else if nullable && ty.Kind() != reflect.Slice && ty.Kind() != reflect.Map {
		t.Errorf("%s: the schema allows null, the Go field (%s) cannot be nil", path, ty)
	}
	want := ""
	switch ty.Kind() {
	case reflect.String:
		want = "string"
	case reflect.Bool:
		want = "boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		want = "integer"
	case reflect.Float64:
		want = "number"
	case reflect.Slice:
		want = "array"
	case reflect.Struct, reflect.Map:
		want = "object"
	default:
		t.Errorf("%s: Go kind %s has no JSON type here", path, ty.Kind())
		return
	}
	if len(allowed) != 1 || !allowed[want] {
		t.Errorf("%s: the Go type %s is JSON %s; the schema allows %v", path, ty, want, keys(allowed))
		return
	}
	switch ty.Kind() {
	case reflect.Slice:
		items, _ := node["items"].(map[string]any)
		if items == nil {
			t.Errorf("%s: an array without items", path)
			return
		}
		a.check(path+"[]", ty.Elem(), items)
	case reflect.Map:
		if ap, ok := node["additionalProperties"].(map[string]any); ok {
			a.check(path+"{}", ty.Elem(), ap)
		} else if node["additionalProperties"] == false {
			t.Errorf("%s: a Go map, but the schema allows no names", path)
		}
	case reflect.Struct:
		a.object(path, ty, node)
	}
}

func (a *agreement) object(path string, ty reflect.Type, node map[string]any) {
	t := a.t
	a.objects++
	props, _ := node["properties"].(map[string]any)
	var required []string
	for _, r := range node["required"].([]any) {
		required = append(required, r.(string))
	}
	if node["additionalProperties"] != false && !openObjects[path] {
		t.Errorf("%s: the schema allows names the type does not have (additionalProperties is not false)", path)
	}
	// fields are the names always written (required), named every name.
	var fields, named []string
	for i := range ty.NumField() {
		f := ty.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		sub, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("%s.%s: a Go field the schema does not name", path, name)
			continue
		}
		ft := f.Type
		switch {
		case !strings.Contains(opts, "omitempty"):
			fields = append(fields, name)
		case !a.extension && !strings.HasPrefix(path, "results.json.extensions"):
			t.Errorf("%s.%s: omitempty, but every field of the contract is present (null when unknown)", path, name)
		case ft.Kind() == reflect.Pointer:
			ft = ft.Elem() // left out, never null
		}
		named = append(named, name)
		a.check(path+"."+name, ft, sub)
	}
	for name := range props {
		if !contains(named, name) {
			t.Errorf("%s.%s: the schema names a field the Go type %s does not have", path, name, ty)
		}
	}
	sort.Strings(fields)
	sort.Strings(required)
	if strings.Join(fields, ",") != strings.Join(required, ",") {
		t.Errorf("%s: required %v, the Go fields %v", path, required, fields)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestProtocolsAreTheTables: the schema admits exactly the protocol IDs
// and profiles of the table strata ships.
func TestProtocolsAreTheTables(t *testing.T) {
	t.Parallel()
	var root struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(ResultsV1, &root); err != nil {
		t.Fatal(err)
	}
	var p struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(root.Properties["protocol"], &p); err != nil {
		t.Fatal(err)
	}
	var ids, profiles []string
	for _, d := range protocol.Known() {
		ids, profiles = append(ids, d.ID), append(profiles, d.Profile)
	}
	for name, want := range map[string][]string{"id": ids, "profile": profiles} {
		got := append([]string(nil), p.Properties[name].Enum...)
		sort.Strings(got)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("protocol.%s: the schema admits %v, the table has %v", name, got, want)
		}
	}
}

// TestReasonKindsAreTheContracts: the schema's reason kinds are the
// contract's, in order.
func TestReasonKindsAreTheContracts(t *testing.T) {
	t.Parallel()
	var root struct {
		Defs struct {
			Extensions struct {
				Properties struct {
					StatusReasons struct {
						Properties struct {
							Nonconforming struct {
								Items struct {
									Properties struct {
										Kind struct {
											Enum []string `json:"enum"`
										} `json:"kind"`
									} `json:"properties"`
								} `json:"items"`
							} `json:"nonconforming"`
						} `json:"properties"`
					} `json:"status_reasons"`
				} `json:"properties"`
			} `json:"extensions"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(ResultsV1, &root); err != nil {
		t.Fatal(err)
	}
	got := root.Defs.Extensions.Properties.StatusReasons.Properties.Nonconforming.Items.Properties.Kind.Enum
	var want []string
	for _, k := range contract.ReasonKinds() {
		want = append(want, string(k))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the schema's reason kinds %v, the contract's %v", got, want)
	}
}
