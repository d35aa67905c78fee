// Package gguf names GGUF model files, reads their metadata (read.go) and
// writes small metadata-only ones, which the simulated engine and the
// tests use as stand-in models.
package gguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/strata-bench/strata/internal/atomicfile"
)

// Named reports whether path names a GGUF file: its extension is .gguf, in
// any case. The loaders of tokenizers and chat templates take such a path
// for a model file.
func Named(path string) bool { return strings.EqualFold(filepath.Ext(path), ".gguf") }

// Value types of the GGUF format (gguf.md, "File Structure").
const (
	typeUint32  uint32 = 4
	typeInt32   uint32 = 5
	typeFloat32 uint32 = 6
	typeBool    uint32 = 7
	typeString  uint32 = 8
	typeArray   uint32 = 9
	typeUint64  uint32 = 10
)

// KV is one metadata entry to write. Value is a string, bool, uint32, int32,
// uint64, float32, []string or []int32.
type KV struct {
	Key   string
	Value any
}

// Write writes a GGUF v3 file with the given metadata and no tensors. It
// writes to a temporary file in the same folder and renames it into place.
func Write(path string, kvs []KV) error {
	var b bytes.Buffer
	if err := encode(&b, kvs); err != nil {
		return fmt.Errorf("write GGUF %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, b.Bytes(), 0o644)
}

func encode(w io.Writer, kvs []KV) error {
	e := &encoder{w: w}
	e.raw("GGUF")
	e.put(uint32(3))
	e.put(uint64(0)) // tensors
	e.put(uint64(len(kvs)))
	for _, kv := range kvs {
		e.putString(kv.Key)
		if err := e.value(kv); err != nil {
			return err
		}
	}
	return e.err
}

// encoder writes GGUF's little-endian values to w; after its first
// failure it writes nothing more and err holds the failure.
type encoder struct {
	w   io.Writer
	err error
}

func (e *encoder) raw(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

func (e *encoder) put(v any) {
	if e.err == nil {
		e.err = binary.Write(e.w, binary.LittleEndian, v)
	}
}

func (e *encoder) putString(s string) {
	e.put(uint64(len(s)))
	e.raw(s)
}

// value writes a metadata value: its type, then the value.
func (e *encoder) value(kv KV) error {
	switch v := kv.Value.(type) {
	case string:
		e.put(typeString)
		e.putString(v)
	case bool:
		b := uint8(0)
		if v {
			b = 1
		}
		e.put(typeBool)
		e.put(b)
	case uint32:
		e.put(typeUint32)
		e.put(v)
	case int32:
		e.put(typeInt32)
		e.put(v)
	case uint64:
		e.put(typeUint64)
		e.put(v)
	case float32:
		e.put(typeFloat32)
		e.put(math.Float32bits(v))
	case []string:
		e.put(typeArray)
		e.put(typeString)
		e.put(uint64(len(v)))
		for _, s := range v {
			e.putString(s)
		}
	case []int32:
		e.put(typeArray)
		e.put(typeInt32)
		e.put(uint64(len(v)))
		e.put(v)
	default:
		return fmt.Errorf("metadata %s: unsupported value type %T", kv.Key, kv.Value)
	}
	return nil
}
