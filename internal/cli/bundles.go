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
	var head struct {
		Protocol struct {
			ID string `json:"id"`
		} `json:"protocol"`
	}
	if data, err := strictjson.ReadFile(os.DirFS(dir), contract.ResultsFile, contract.MaxResultsBytes); err == nil {
		// A results.json that does not parse names no protocol: it gets
		// the embedded bundle, and the validator reports what is wrong.
		_ = json.Unmarshal(data, &head)
	}
	def, err := src.Protocol(head.Protocol.ID)
	if err != nil || head.Protocol.ID == "" {
		return prompts.Bundle()
	}
	b, err := src.Open(def)
	if errors.Is(err, prompts.ErrNoBundle) {
		return nil, fmt.Errorf("%s is a result of %s, whose bundle is read from a Strata checkout: run this inside one, or pass --bundle DIR (%w)", filepath.Base(dir), def.ID, err)
	}
	return b, err
}
