package gguf

// Reading: the metadata of GGUF model files, through
// github.com/gpustack/gguf-parser-go: a tokenizer's lists, the chat
// template, and what a result records of the model. Tensor data is never
// read.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"unicode/utf8"

	parser "github.com/gpustack/gguf-parser-go"

	"github.com/strata-bench/strata/internal/inputfile"
)

// File is the parsed metadata of one GGUF file (or a split set).
type File struct {
	f *parser.GGUFFile
}

// Open parses the header and metadata of the GGUF file at path. Tensor data is
// never read. The parser's estimators have panicked on odd metadata, so a
// panic is turned into an error naming the file.
func Open(path string) (*File, error) { return open(path, false) }

// OpenWithoutLists is Open without the values of the metadata's lists (a
// tokenizer's 150,000 tokens and as many merges): their lengths, every
// string and number, and the tensors are read, in a fifth of the time;
// Strings and Ints of a list answer nothing. It is for what reads a model's
// identity or its chat template, not its tokenizer.
func OpenWithoutLists(path string) (*File, error) { return open(path, true) }

func open(path string, withoutLists bool) (file *File, err error) {
	defer func() {
		if r := recover(); r != nil {
			file, err = nil, fmt.Errorf("read GGUF %s: parser panic: %v", path, r)
		}
	}()
	// A FIFO or a device named as a model would block or never end.
	if err := inputfile.Check(path); err != nil {
		return nil, fmt.Errorf("read GGUF: %w", err)
	}
	// Read from the file value by value, a tokenizer's 150,000 strings cost
	// a million read and seek calls; mapped, they are memory reads. A fault in the mapping (the file cut short while it is
	// read) is made a panic, which the recover above turns into an error.
	// An empty file cannot be mapped, and fails on its missing magic.
	var opts []parser.GGUFReadOption
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		opts = append(opts, parser.UseMMap())
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	}
	if withoutLists {
		opts = append(opts, parser.SkipLargeMetadata())
	}
	f, err := parser.ParseGGUFFile(path, opts...)
	if err != nil {
		return nil, fmt.Errorf("read GGUF %s: %w", path, err)
	}
	return &File{f: f}, nil
}

// String returns a string metadata value.
func (f *File) String(key string) (string, bool) {
	kv, ok := f.f.Header.MetadataKV.Get(key)
	if !ok || kv.ValueType != parser.GGUFMetadataValueTypeString {
		return "", false
	}
	return kv.ValueString(), true
}

// list is the array value at key, when its values were read.
func (f *File) list(key string) (parser.GGUFMetadataKVArrayValue, bool) {
	kv, ok := f.f.Header.MetadataKV.Get(key)
	if !ok || kv.ValueType != parser.GGUFMetadataValueTypeArray {
		return parser.GGUFMetadataKVArrayValue{}, false
	}
	av := kv.ValueArray()
	return av, uint64(len(av.Array)) == av.Len
}

// Strings returns a string-array metadata value.
func (f *File) Strings(key string) ([]string, bool) {
	av, ok := f.list(key)
	if !ok || av.Type != parser.GGUFMetadataValueTypeString {
		return nil, false
	}
	return av.ValuesString(), true
}

// Ints returns an integer-array metadata value (any integer element type).
func (f *File) Ints(key string) ([]int64, bool) {
	av, ok := f.list(key)
	if !ok {
		return nil, false
	}
	var out []int64
	switch av.Type {
	case parser.GGUFMetadataValueTypeInt32:
		for _, v := range av.ValuesInt32() {
			out = append(out, int64(v))
		}
	case parser.GGUFMetadataValueTypeUint32:
		for _, v := range av.ValuesUint32() {
			out = append(out, int64(v))
		}
	case parser.GGUFMetadataValueTypeInt64:
		out = av.ValuesInt64()
	case parser.GGUFMetadataValueTypeUint8:
		for _, v := range av.ValuesUint8() {
			out = append(out, int64(v))
		}
	case parser.GGUFMetadataValueTypeInt8:
		for _, v := range av.ValuesInt8() {
			out = append(out, int64(v))
		}
	default:
		return nil, false
	}
	return out, true
}

// Architecture returns general.architecture, or "" when absent.
func (f *File) Architecture() string {
	s, _ := f.String("general.architecture")
	return s
}

// baseModels names the models the file says it was made from
// (general.base_model.N: a fine-tune's source, or the original of a
// quantization), as "organization/name" where both are given.
func (f *File) baseModels() []string {
	kv, ok := f.f.Header.MetadataKV.Get("general.base_model.count")
	if !ok {
		return nil
	}
	var n uint64
	switch kv.ValueType {
	case parser.GGUFMetadataValueTypeUint32:
		n = uint64(kv.ValueUint32())
	case parser.GGUFMetadataValueTypeUint64:
		n = kv.ValueUint64()
	default:
		return nil
	}
	var out []string
	for i := uint64(0); i < min(n, 16); i++ {
		name, _ := f.String(fmt.Sprintf("general.base_model.%d.name", i))
		org, _ := f.String(fmt.Sprintf("general.base_model.%d.organization", i))
		switch {
		case name != "" && org != "":
			out = append(out, org+"/"+name)
		case name != "":
			out = append(out, name)
		}
	}
	return out
}

// Fact is one metadata value (a string, an integer or a list of strings)
// and the key or reading it came from.
type Fact struct {
	Value  any
	Source string
}

// MaxText bounds a string the summary keeps: a model's names are a few
// dozen bytes, and a file holding 100 MB in one would make a result that
// no validator reads.
const MaxText = 1024

// text is s as a result keeps it, and what was changed ("" nothing): valid
// UTF-8 (JSON cannot carry other bytes, and would change them when the
// result is written, so that what a result derives from the summary could
// not be derived again from the file) of at most MaxText bytes, cut
// between characters.
func text(s string) (string, string) {
	var whys []string
	n := len(s)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
		whys = append(whys, "bytes that are not UTF-8 are U+FFFD")
	}
	if len(s) > MaxText {
		cut := MaxText
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
		whys = append(whys, fmt.Sprintf("cut to its first %d of %d bytes", cut, n))
	}
	return s, strings.Join(whys, "; ")
}

// Summary returns what the metadata says about the model, each value with
// its source key, for a result's extensions. It never feeds an
// operator-declared field.
func (f *File) Summary() (out map[string]Fact) {
	out = map[string]Fact{}
	defer func() {
		if r := recover(); r != nil {
			out["error"] = Fact{Value: fmt.Sprintf("the GGUF parser failed on this metadata: %v", r), Source: "strata"}
		}
	}()
	arch := f.Architecture()
	put := func(name, key string) {
		kv, ok := f.f.Header.MetadataKV.Get(key)
		if !ok {
			return
		}
		var v any
		source := "GGUF " + key
		switch kv.ValueType {
		case parser.GGUFMetadataValueTypeString:
			var why string
			if v, why = text(kv.ValueString()); why != "" {
				source += " (" + why + ")"
			}
		case parser.GGUFMetadataValueTypeUint32:
			v = kv.ValueUint32()
		case parser.GGUFMetadataValueTypeInt32:
			v = kv.ValueInt32()
		case parser.GGUFMetadataValueTypeUint64:
			v = kv.ValueUint64()
		default:
			return
		}
		out[name] = Fact{Value: v, Source: source}
	}
	put("architecture", "general.architecture")
	put("name", "general.name")
	put("basename", "general.basename")
	put("finetune", "general.finetune")
	put("size_label", "general.size_label")
	put("file_type", "general.file_type")
	put("parameter_count", "general.parameter_count")
	put("quantization_version", "general.quantization_version")
	put("tokenizer_model", "tokenizer.ggml.model")
	put("tokenizer_pre", "tokenizer.ggml.pre")
	if kv, ok := f.f.Header.MetadataKV.Get("tokenizer.ggml.tokens"); ok && kv.ValueType == parser.GGUFMetadataValueTypeArray {
		out["tokenizer_tokens"] = Fact{Value: kv.ValueArray().Len, Source: "the length of GGUF tokenizer.ggml.tokens"}
	}
	if bases := f.baseModels(); len(bases) > 0 {
		source, whys := "GGUF general.base_model.N.organization and .name", []string{}
		for i, b := range bases {
			var why string
			if bases[i], why = text(b); why != "" && !slices.Contains(whys, why) {
				whys = append(whys, why)
			}
		}
		if len(whys) > 0 {
			source += " (" + strings.Join(whys, "; ") + ")"
		}
		out["base_models"] = Fact{Value: bases, Source: source}
	}
	if arch != "" {
		put("context_length", arch+".context_length")
	}
	if tmpl, ok := f.String("tokenizer.chat_template"); ok {
		sum := sha256.Sum256([]byte(tmpl))
		out["chat_template_sha256"] = Fact{Value: hex.EncodeToString(sum[:]), Source: "GGUF tokenizer.chat_template"}
	}
	m := f.f.Metadata()
	if m.FileType.String() != "" {
		out["tensor_types"] = Fact{Value: m.FileType.String(), Source: "gguf-parser-go's reading of the tensor types (a hint, never the declared quantization)"}
	}
	if m.Parameters > 0 {
		out["parameters"] = Fact{Value: uint64(m.Parameters), Source: "gguf-parser-go's count of the tensors"}
	}
	return out
}
