// Package gguf names GGUF model files, reads their metadata (read.go) and
// writes small metadata-only ones, which the simulated engine and the
// tests use as stand-in models.
package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
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
	le := binary.LittleEndian
	put := func(v any) error { return binary.Write(w, le, v) }
	putString := func(s string) error {
		if err := put(uint64(len(s))); err != nil {
			return err
		}
		_, err := io.WriteString(w, s)
		return err
	}
	if _, err := io.WriteString(w, "GGUF"); err != nil {
		return err
	}
	if err := put(uint32(3)); err != nil {
		return err
	}
	if err := put(uint64(0)); err != nil { // tensors
		return err
	}
	if err := put(uint64(len(kvs))); err != nil {
		return err
	}
	for _, kv := range kvs {
		if err := putString(kv.Key); err != nil {
			return err
		}
		var err error
		switch v := kv.Value.(type) {
		case string:
			if err = put(typeString); err == nil {
				err = putString(v)
			}
		case bool:
			b := uint8(0)
			if v {
				b = 1
			}
			if err = put(typeBool); err == nil {
				err = put(b)
			}
		case uint32:
			if err = put(typeUint32); err == nil {
				err = put(v)
			}
		case int32:
			if err = put(typeInt32); err == nil {
				err = put(v)
			}
		case uint64:
			if err = put(typeUint64); err == nil {
				err = put(v)
			}
		case float32:
			if err = put(typeFloat32); err == nil {
				err = put(math.Float32bits(v))
			}
		case []string:
			if err = put(typeArray); err == nil {
				err = errors.Join(put(typeString), put(uint64(len(v))))
			}
			for i := 0; err == nil && i < len(v); i++ {
				err = putString(v[i])
			}
		case []int32:
			if err = put(typeArray); err == nil {
				err = errors.Join(put(typeInt32), put(uint64(len(v))), put(v))
			}
		default:
			return fmt.Errorf("metadata %s: unsupported value type %T", kv.Key, kv.Value)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
