// Package prompts embeds the frozen fixture bundles so that an installed
// binary carries the exact bytes it sends. The files themselves are the
// contract; this package only exposes them.
package prompts

import (
	"embed"
	"io/fs"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/protocol"
)

//go:embed standard-v1
var files embed.FS

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
func Bundle() (*fixtures.Bundle, error) {
	return fixtures.Load(FS(), Where, protocol.CorpusSHA256)
}
