// Package prompts embeds the frozen fixture bundles so that an installed
// binary carries the exact bytes it sends. The files themselves are the
// contract; this package only exposes them.
package prompts

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"sync"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
)

//go:embed standard-v1
var files embed.FS

// template is the chat template the bundle was built with (the Qwen3
// template of ../shared/tokenizer/qwen3, byte for byte). The preflight
// renders every fixture with it and compares the engine's own rendering.
//
//go:embed template/chat_template.jinja
var template []byte

// FS returns the embedded bundle's files (MANIFEST.sha256 at the root).
func FS() fs.FS {
	sub, err := fs.Sub(files, protocol.BundleName)
	if err != nil { // cannot happen: the name is fixed at compile time
		panic(err)
	}
	return sub
}

// Where names the embedded bundle in messages.
const Where = "embedded " + protocol.BundleName

// Bundle verifies the embedded bundle against its manifest and the
// protocol's corpus SHA-256, and loads it.
func Bundle() (*fixtures.Bundle, error) { return embedded() }

// embedded loads and verifies the embedded bundle once: the files are in
// the binary and cannot change while it runs. The bundle is shared and
// read-only.
var embedded = sync.OnceValues(func() (*fixtures.Bundle, error) {
	return fixtures.Load(FS(), Where, protocol.CorpusSHA256)
})

// Template returns the chat template the embedded bundle was built with,
// after checking its SHA-256 against the bundle's build.json (which the
// manifest, and so the corpus SHA, covers).
func Template(b *fixtures.Bundle) ([]byte, string, error) {
	var build struct {
		Inputs struct {
			ChatTemplate struct {
				SHA256 string `json:"sha256"`
			} `json:"chat_template"`
		} `json:"inputs"`
	}
	if err := json.Unmarshal(b.Build, &build); err != nil {
		return nil, "", fmt.Errorf("%s: build.json: %w", Where, err)
	}
	sum := sha256.Sum256(template)
	got := hex.EncodeToString(sum[:])
	if want := build.Inputs.ChatTemplate.SHA256; got != want {
		return nil, "", fmt.Errorf("the embedded chat template hashes to %s, but build.json names %s", got, want)
	}
	return template, got, nil
}
