package corpus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/modelfiles"
	"github.com/strata-bench/strata/internal/protocol"
)

// BuildFormat names the build.json format.
const BuildFormat = "strata-fixture-bundle-build"

// buildInfo is build.json: how the bundle was made, so anyone can rebuild it.
type buildInfo struct {
	Format     string  `json:"format"`
	Bundle     string  `json:"bundle"`
	ProtocolID string  `json:"protocol_id"`
	Builder    string  `json:"builder"`
	Inputs     inputs  `json:"inputs"`
	Parameters params  `json:"parameters"`
	Lengths    lengths `json:"record_counts"`
	Requests   []reqs  `json:"requests"`
}

type inputs struct {
	Tokenizer []Source `json:"tokenizer"`
	Template  Source   `json:"chat_template"`
}

type params struct {
	AddGenerationPrompt bool           `json:"add_generation_prompt"`
	TemplateKwargs      map[string]any `json:"template_kwargs"`
	LengthTolerance     int            `json:"length_tolerance_percent"`
	RecordFormat        string         `json:"record_format"`
	CasePrefix          string         `json:"case_prefix"`
	TieBreak            string         `json:"tie_break"`
}

type lengths struct {
	K4  LengthChoice `json:"4k"`
	K16 LengthChoice `json:"16k"`
}

type reqs struct {
	RequestID             string `json:"request_id"`
	File                  string `json:"file"`
	InputTokens           int    `json:"input_tokens"`
	MaxSharedPrefixTokens int    `json:"max_shared_prefix_tokens"`
}

func (b *builder) buildInfo(out *Bundle) buildInfo {
	kw := protocol.ProfileTemplateKwargs()
	info := buildInfo{
		Format: BuildFormat, Bundle: b.in.BundleName, ProtocolID: b.in.ProtocolID,
		Builder: "strata bench corpus build",
		Inputs:  inputs{Tokenizer: b.in.TokenizerSources, Template: b.in.TemplateSource},
		Parameters: params{
			AddGenerationPrompt: true,
			TemplateKwargs: map[string]any{
				"enable_thinking": kw.EnableThinking, "preserve_thinking": kw.PreserveThinking,
				"reasoning_effort": protocol.ProfileSampling().ReasoningEffort,
			},
			LengthTolerance: protocol.LengthTolerancePercent,
			RecordFormat:    protocol.RecordFormat,
			CasePrefix:      protocol.CasePrefixFormat,
			TieBreak:        "the smaller record count when two are equally close",
		},
		Lengths: lengths{K4: out.Records[protocol.Size4K], K16: out.Records[protocol.Size16K]},
	}
	for _, f := range out.Fixtures {
		info.Requests = append(info.Requests, reqs{
			RequestID: f.RequestID, File: fixtures.FileName(f.RequestID),
			InputTokens: f.InputTokens, MaxSharedPrefixTokens: f.MaxSharedPrefixTokens,
		})
	}
	return info
}

func sha256Hex(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// SourceOf names an input file by base name and SHA-256, read until ctx
// ends (a GGUF model file is gigabytes).
func SourceOf(ctx context.Context, path string) (Source, error) {
	sum, err := modelfiles.SHA256(ctx, path)
	if err != nil {
		return Source{}, err
	}
	return Source{Name: filepath.Base(path), SHA256: sum}, nil
}

// ErrExists is returned when the output folder already exists.
var ErrExists = errors.New("already exists; choose a new folder (a bundle is never overwritten)")

// Write writes the bundle into dir, which must not exist. Files go into a
// temporary sibling folder that is renamed into place, so a failed build
// leaves no partial bundle.
func (b *Bundle) Write(dir string) (err error) {
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("output folder %s %w", dir, ErrExists)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", parent, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("create a temporary folder in %s: %w", parent, err)
	}
	// A failed build's temporary folder is removed as far as it can be:
	// the build's error is the one that matters, and the one returned.
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	names := make([]string, 0, len(b.Files))
	for n := range b.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(tmp, n), b.Files[n], 0o644); err != nil {
			return fmt.Errorf("write %s: %w", n, err)
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("move the bundle into %s: %w", dir, err)
	}
	return nil
}
