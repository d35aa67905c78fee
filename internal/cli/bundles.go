package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/strictjson"
)

// folderBundle is the bundle a saved result folder is checked with: the
// bundle of the protocol its results.json names (the embedded one for the
// stand-in, a Strata checkout's for the spec's). A folder that names no
// protocol strata knows gets the embedded bundle, and the validator says
// the protocol is unknown; a known protocol whose bundle is not here is an
// error that says where to find it.
func folderBundle(e procstate.State, dir, bundleDir string) (*fixtures.Bundle, error) {
	src := sources(e, bundleDir)
	def, ok := folderProtocol(src, dir)
	if !ok {
		return prompts.Bundle()
	}
	b, err := src.Open(def)
	if errors.Is(err, prompts.ErrNoBundle) {
		return nil, fmt.Errorf("%s is a result of %s, whose bundle is read from a Strata checkout: run this inside one, or pass --bundle DIR (%w)", filepath.Base(dir), def.ID, err)
	}
	return b, err
}

// folderProtocol is the protocol a result folder's results.json names;
// false when it names none strata knows (or cannot be read: the validator
// says what is wrong).
func folderProtocol(src prompts.Sources, dir string) (protocol.Definition, bool) {
	var head struct {
		Protocol struct {
			ID string `json:"id"`
		} `json:"protocol"`
	}
	if data, err := strictjson.ReadFile(os.DirFS(dir), contract.ResultsFile, contract.MaxResultsBytes); err == nil {
		// A results.json that does not parse names no protocol.
		_ = json.Unmarshal(data, &head)
	}
	if head.Protocol.ID == "" {
		return protocol.Definition{}, false
	}
	def, err := src.Protocol(head.Protocol.ID)
	return def, err == nil
}

// bundleFlag refuses, before any folder is read, a --bundle (given: as
// typed) that the folders args name cannot use: one of them is a result
// of a protocol whose bundle is embedded, which would ignore it (named
// with the folder), or the path is no bundle folder.
func bundleFlag(e procstate.State, given string, args []string) error {
	if given == "" {
		return nil
	}
	src := sources(e, given)
	for _, arg := range args {
		def, ok := folderProtocol(src, e.Path(arg))
		if !ok {
			continue
		}
		if err := prompts.EmbeddedFlag(given, def); err != nil {
			return usagef("%s: %w", arg, err)
		}
	}
	return src.FlagDir(given)
}
