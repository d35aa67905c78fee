// Package folder writes a result folder: the result internal/result maps
// from a run's record, every file redacted, the run's charts drawn from
// its results.json, the artifacts' hashes taken over the final bytes,
// written aside and renamed into place complete.
// Finish is the one tail of `bench run` and `bench recover`; the strict
// reading of a saved folder is internal/validate's.
package folder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/strata-bench/strata/internal/charts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/jsonfmt"
	"github.com/strata-bench/strata/internal/record"
	"github.com/strata-bench/strata/internal/redact"
	"github.com/strata-bench/strata/internal/report"
	"github.com/strata-bench/strata/internal/result"
)

// Finish turns a run's record into its result folder under root: it
// assembles the result (with the bundle's shared prefixes), redacts it and
// writes it aside, then renames it into place. check, when set, must accept
// the complete folder first (bench recover writes only what report
// accepts); nil writes whatever the run gave, so a live run is never lost
// to a rule it broke. It is the one tail of `bench run` and `bench
// recover`.
func Finish(root string, rec *record.Run, id record.Identity, facts record.Facts, b *fixtures.Bundle, red *redact.Redactor,
	check func(dir string) error) (string, *contract.Results, error) {
	a, err := result.Assemble(rec, id, facts, b.MaxShared(), red)
	if err != nil {
		return "", nil, fmt.Errorf("assemble the result: %w", err)
	}
	dir, err := Write(root, a, red, check)
	if err != nil {
		return "", nil, err
	}
	return dir, &a.Results, nil
}

// Write writes the result folder under root and returns its path. Every file
// passes through the redactor, artifact hashes are taken over the final
// bytes, and the folder appears only complete: it is written to a temporary
// folder and renamed. An existing folder is never overwritten. check, when
// set, runs on the complete temporary folder before it is renamed into
// place: when check fails, nothing is written.
func Write(root string, a *result.Assembled, red *redact.Redactor, check func(dir string) error) (string, error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", root, err)
	}
	final := filepath.Join(root, a.Dir)
	if _, err := os.Lstat(final); err == nil {
		return "", fmt.Errorf("result folder %s already exists; a run never overwrites an earlier result", final)
	}
	tmp, err := os.MkdirTemp(root, "."+a.Dir+".partial-")
	if err != nil {
		return "", fmt.Errorf("create a temporary folder in %s: %w", root, err)
	}
	ok := false
	defer func() {
		if !ok {
			// Best effort: the write's own error is the one to report, and
			// a leftover is hidden and named as partial.
			_ = os.RemoveAll(tmp)
		}
	}()
	files, err := Render(a, red)
	if err != nil {
		return "", err
	}
	// Render decides which files the folder holds; each is written here.
	for _, name := range slices.Sorted(maps.Keys(files)) {
		if err := os.WriteFile(filepath.Join(tmp, name), files[name], 0o644); err != nil {
			return "", fmt.Errorf("write %s: %w", name, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", err
	}
	if check != nil {
		if err := check(tmp); err != nil {
			return "", err
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("move the result into %s: %w", final, err)
	}
	ok = true
	return final, nil
}

// Render produces the final, redacted bytes of every file of the folder.
func Render(a *result.Assembled, red *redact.Redactor) (map[string][]byte, error) {
	files := map[string][]byte{}
	res := a.Results
	res.Artifacts = []contract.Artifact{}
	// The lines first, then one allocation of their total: outputs.jsonl
	// runs to megabytes (every delta of every request), which a growing
	// buffer would copy again each time it grew.
	lines := make([][]byte, 0, len(a.Outputs))
	size := 0
	for _, o := range a.Outputs {
		line, err := o.Line()
		if err == nil {
			line, err = red.JSON(line, false, contract.ProtocolOwned(contract.OutputsFile))
		}
		if err != nil {
			return nil, fmt.Errorf("outputs %s: %w", o.RequestID, err)
		}
		lines = append(lines, line)
		size += len(line) + 1
	}
	out := make([]byte, 0, size)
	for _, line := range lines {
		out = append(append(out, line...), '\n')
	}
	files[contract.OutputsFile] = out
	cfg, err := red.JSON(a.Config, true, nil)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	files[contract.ConfigFile] = append(cfg, '\n')
	if a.Template != nil {
		files[contract.TemplateFile] = red.Bytes(a.Template)
		res.Configuration.Template = &contract.PathSHA{Path: contract.TemplateFile, SHA256: sha256Hex(files[contract.TemplateFile])}
	}
	if a.EngineLog != nil {
		files[contract.EngineLog] = red.Bytes(a.EngineLog)
	}
	// The power readings are strata's own numbers (times, device indices,
	// watts): nothing in them can be private, and redaction must not touch
	// the bytes energy is derived from again.
	if a.Power != nil {
		files[contract.PowerFile] = a.Power
	}
	for _, art := range []struct{ kind, name string }{
		{contract.ArtifactConfig, contract.ConfigFile},
		{contract.ArtifactEngineLog, contract.EngineLog},
		{contract.ArtifactOutputs, contract.OutputsFile},
		{contract.ArtifactProvenance, contract.TemplateFile},
		{contract.ArtifactProvenance, contract.PowerFile},
	} {
		if data, ok := files[art.name]; ok {
			res.Artifacts = append(res.Artifacts, contract.Artifact{Kind: art.kind, Path: art.name, SHA256: sha256Hex(data)})
		}
	}
	final, err := withCharts(files, &res, red)
	if err != nil {
		return nil, err
	}
	// The README is derived from the redacted results.json alone, so it is
	// not redacted again (its own wording is strata's).
	var readme bytes.Buffer
	_ = report.README(&readme, final) // a bytes.Buffer's writes never fail
	files[contract.ReadmeFile] = readme.Bytes()
	return files, nil
}

// withCharts adds the run's charts to files, each listed in res's
// artifacts as provenance with its hash, and results.json; it returns
// that results.json as read back. The charts are drawn from the redacted
// results.json alone (as bench report draws them again to compare), so,
// like the README, they are not redacted again; results.json is written
// once without them to draw them from, and once with them listed.
func withCharts(files map[string][]byte, res *contract.Results, red *redact.Redactor) (*contract.Results, error) {
	_, first, err := encode(res, red)
	if err != nil {
		return nil, err
	}
	cs, err := charts.Files(first)
	if err != nil {
		return nil, fmt.Errorf("charts: %w", err)
	}
	for _, f := range cs {
		files[f.Name] = f.Data
		res.Artifacts = append(res.Artifacts, contract.Artifact{Kind: contract.ArtifactProvenance, Path: f.Name, SHA256: sha256Hex(f.Data)})
	}
	data, final, err := encode(res, red)
	if err != nil {
		return nil, err
	}
	files[contract.ResultsFile] = data
	return final, nil
}

// encode is res as results.json holds it (indented, redacted, with a
// final newline) and that file read back.
func encode(res *contract.Results, red *redact.Redactor) ([]byte, *contract.Results, error) {
	data, err := jsonfmt.Indent(res)
	if err == nil {
		data, err = red.JSON(data, true, contract.ProtocolOwned(contract.ResultsFile))
	}
	if err != nil {
		return nil, nil, fmt.Errorf("results.json: %w", err)
	}
	data = append(data, '\n')
	var back contract.Results
	if err := json.Unmarshal(data, &back); err != nil {
		return nil, nil, fmt.Errorf("results.json after redaction: %w", err)
	}
	return data, &back, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
