// Package prompts provides the fixture bundles of the protocols strata
// knows: the stand-in's, embedded so that an installed binary carries the
// exact bytes it sends, and the spec's, read from a Strata checkout's
// bench/prompts/standard-v1 (or --bundle DIR) and verified byte for byte
// against its MANIFEST.sha256 and the protocol's corpus SHA-256 before
// anything is sent. The files themselves are the contract; this package
// only finds and exposes them.
package prompts

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/inputfile"
	"github.com/strata-bench/strata/internal/protocol"
)

//go:embed qwen3-standard-v1
var files embed.FS

// template is the chat template the embedded bundle was built with (the
// Qwen3 template of ../shared/tokenizer/qwen3, byte for byte). The
// preflight renders every fixture with it and compares the engine's own
// rendering.
//
//go:embed template/chat_template.jinja
var template []byte

// FS returns the embedded bundle's files (MANIFEST.sha256 at the root).
func FS() fs.FS {
	sub, err := fs.Sub(files, protocol.StandInBundleName)
	if err != nil { // cannot happen: the name is fixed at compile time
		panic(err)
	}
	return sub
}

// Where names the embedded bundle in messages.
const Where = "embedded " + protocol.StandInBundleName

// CheckoutDir is where a Strata checkout holds the spec's bundle, relative
// to the checkout.
var CheckoutDir = filepath.Join("bench", "prompts", protocol.BundleName)

// checkoutTemplate is the template the spec's bundle was built with,
// relative to the checkout ("the chat template Strata ships").
var checkoutTemplate = filepath.Join("serve", "chat_template.jinja")

// Bundle verifies the embedded bundle (the stand-in protocol's) and loads
// it.
func Bundle() (*fixtures.Bundle, error) { return embedded() }

// embedded loads and verifies the embedded bundle once: the files are in
// the binary and cannot change while it runs. The bundle is shared and
// read-only.
var embedded = sync.OnceValues(func() (*fixtures.Bundle, error) {
	def, _ := protocol.Known().Lookup(protocol.StandInID)
	b, err := fixtures.Load(FS(), Where, def)
	if err != nil {
		return nil, err
	}
	b.Template, err = checkTemplate(b, template, "the embedded chat template")
	return b, err
})

// Sources say where the bundles of a run are: the protocols strata knows,
// the working folder (a Strata checkout holds the spec's bundle at
// bench/prompts/standard-v1 there) and --bundle DIR.
type Sources struct {
	Table   protocol.Table
	Workdir string
	Dir     string
}

func (s Sources) table() protocol.Table {
	if s.Table == nil {
		return protocol.Known()
	}
	return s.Table
}

// Checkout returns the folder of a bundle read from a checkout: --bundle
// DIR, else the working folder's bench/prompts/standard-v1 when it exists
// ("" when neither).
func (s Sources) Checkout() string {
	if s.Dir != "" {
		return s.Dir
	}
	dir := filepath.Join(s.Workdir, CheckoutDir)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir
	}
	return ""
}

// Default is the protocol a run uses when none is chosen: the spec's when
// a checkout's bundle is there, otherwise the stand-in, whose bundle is
// embedded.
func (s Sources) Default() protocol.Definition {
	id := protocol.StandInID
	if s.Checkout() != "" {
		id = protocol.SpecID
	}
	d, _ := s.table().Lookup(id)
	return d
}

// Protocol returns the protocol with that ID ("": Default).
func (s Sources) Protocol(id string) (protocol.Definition, error) {
	if id == "" {
		return s.Default(), nil
	}
	return s.table().Must(id)
}

// EmbeddedFlag refuses --bundle DIR (given: as the user typed it) for the
// protocol def whose bundle is embedded in strata: no bundle folder is
// read for it, so the flag would be ignored. No --bundle, or a protocol
// read from a checkout: nil.
func EmbeddedFlag(given string, def protocol.Definition) error {
	if given == "" || def.Bundle != protocol.BundleEmbedded {
		return nil
	}
	return exitcode.Usagef("--bundle %s: the bundle of %s is embedded in strata, so no bundle folder is read for it; --bundle names the bundle of a protocol read from a Strata checkout", given, def.ID)
}

// FlagDir refuses, before any work, a --bundle DIR (given: as the user
// typed it; s.Dir: where it resolves) that is no bundle folder: missing, a
// file, or a folder without MANIFEST.sha256. No --bundle: nil.
func (s Sources) FlagDir(given string) error {
	if given == "" {
		return nil
	}
	st, err := os.Stat(s.Dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return exitcode.Usagef("--bundle %s: no such folder", given)
	case err != nil:
		return exitcode.Usagef("--bundle %s: %w", given, err)
	case !st.IsDir():
		return exitcode.Usagef("--bundle %s is a file, not a bundle folder", given)
	}
	if _, err := os.Lstat(filepath.Join(s.Dir, fixtures.ManifestName)); err != nil {
		return exitcode.Usagef("--bundle %s is not a bundle folder (no %s)", given, fixtures.ManifestName)
	}
	return nil
}

// ErrNoBundle means the bundle of a protocol read from a checkout is not
// there.
var ErrNoBundle = errors.New("the protocol's bundle is not here")

// Open loads and verifies the bundle of the protocol def, with the chat
// template it was built with.
func (s Sources) Open(def protocol.Definition) (*fixtures.Bundle, error) {
	switch def.Bundle {
	case protocol.BundleEmbedded:
		b, err := Bundle()
		if err == nil && b.SHA256 != def.CorpusSHA256 {
			err = fmt.Errorf("the embedded bundle hashes to %s, not the corpus SHA-256 %s of %s", b.SHA256, def.CorpusSHA256, def.ID)
		}
		return b, err
	case protocol.BundleCheckout:
		dir := s.Checkout()
		if dir == "" {
			return nil, fmt.Errorf("%w: %s reads its bundle from a Strata checkout (%s under the current folder, or --bundle DIR), and there is none; "+
				"run inside a Strata checkout, or choose --protocol %s, whose bundle strata carries", ErrNoBundle, def.ID, CheckoutDir, protocol.StandInID)
		}
		b, err := fixtures.LoadDir(dir, def)
		if err != nil {
			return nil, fmt.Errorf("%s's bundle: %w", def.ID, err)
		}
		root := filepath.Dir(filepath.Dir(filepath.Dir(dir)))
		path := filepath.Join(root, checkoutTemplate)
		src, err := inputfile.Read(path, 16<<20)
		if err != nil {
			return nil, fmt.Errorf("%s's bundle %s was built with the checkout's %s, which cannot be read: %w", def.ID, dir, checkoutTemplate, err)
		}
		b.Template, err = checkTemplate(b, src, path)
		return b, err
	}
	return nil, fmt.Errorf("protocol %s: unknown bundle source %q", def.ID, def.Bundle)
}

// checkTemplate holds a template to the SHA-256 the bundle's build.json
// names (which the manifest, and so the corpus SHA, covers).
func checkTemplate(b *fixtures.Bundle, src []byte, what string) ([]byte, error) {
	sum := sha256.Sum256(src)
	if got := hex.EncodeToString(sum[:]); got != b.Info.TemplateSHA256 {
		return nil, fmt.Errorf("%s hashes to %s, but the bundle's build.json names %s", what, got, b.Info.TemplateSHA256)
	}
	return src, nil
}

// Template returns the chat template a bundle was built with and its
// SHA-256.
func Template(b *fixtures.Bundle) ([]byte, string, error) {
	if b.Template == nil {
		return nil, "", fmt.Errorf("bundle %s: the chat template it was built with is not known", b.Where)
	}
	return b.Template, b.Info.TemplateSHA256, nil
}
