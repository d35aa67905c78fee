package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/chattemplate"
	"github.com/strata-bench/strata/internal/corpus"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/strictjson"
	"github.com/strata-bench/strata/internal/tokenizer"
)

// corpusBuildHelp is corpus build's description.
const corpusBuildHelp = `Build the fixture bundle exactly as the protocol's construction rules say:
one JSON file per scheduled request (22 required + 12 optional) with its
messages, tools, seed, cap, expected output, frozen token count and longest
shared token prefix, plus build.json and MANIFEST.sha256.

--tokenizer is a Hugging Face tokenizer.json, a vocab.json (with merges.txt
beside it), a Strata pack's tokenizer/ folder (vocab.json, merges.txt,
token_type.json and Strata's own tokenizer.json), a folder holding a
tokenizer.json or vocab.json + merges.txt, or a GGUF model file. --template is
a .jinja file (for the spec's bundle: serve/chat_template.jinja of a Strata
checkout), a tokenizer_config.json, or a GGUF file; it defaults to the GGUF's
own template when --tokenizer is a GGUF. --protocol names the protocol the
bundle is built for (build.json records it; default: the spec's inside a
Strata checkout, else strata's stand-in). The output folder must not exist:
the bundle is written to a temporary folder and renamed into place.`

func newCorpusBuild(env procstate.State) *cobra.Command {
	var tokPath, tmplPath, out, protocolID string
	cmd := &cobra.Command{
		Use:   "build --tokenizer PATH [--template PATH] --out DIR",
		Short: "Build the frozen fixture bundle from a tokenizer and a chat template",
		Long:  corpusBuildHelp,
		Example: `  strata bench corpus build --out /tmp/bundle \
    --tokenizer ../shared/tokenizer/qwen3/tokenizer.json \
    --template ../shared/tokenizer/qwen3/chat_template.jinja
  strata bench corpus build --protocol ` + protocol.SpecID + ` \
    --tokenizer PACK/tokenizer --template serve/chat_template.jinja \
    --out /tmp/spec-bundle`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("tokenizer", tokPath); err != nil {
				return err
			}
			if err := requireFlag("out", out); err != nil {
				return err
			}
			tokPath, out = env.Path(tokPath), env.Path(out)
			if tmplPath == "" {
				if !gguf.Named(tokPath) {
					return usagef("--template is required unless --tokenizer is a GGUF file")
				}
				tmplPath = tokPath
			}
			tmplPath = env.Path(tmplPath)
			if _, err := os.Lstat(out); err == nil {
				return fmt.Errorf("--out %s %w", out, corpus.ErrExists)
			}
			def, err := sources(env, "").Protocol(protocolID)
			if err != nil {
				return usagef("--protocol: %v", err)
			}
			in, err := buildInputs(cmd.Context(), env, tokPath, tmplPath)
			if err != nil {
				return err
			}
			in.ProtocolID, in.BundleName = def.ID, def.BundleName
			b, err := corpus.Build(cmd.Context(), in)
			if err != nil {
				return fmt.Errorf("build the bundle: %w", err)
			}
			if err := writeBundle(b, def, out); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			printf(w, "wrote %d files to %s\n", len(b.Files), out)
			for _, size := range []protocol.Size{protocol.Size4K, protocol.Size16K} {
				c := b.Records[size]
				printf(w, "%-4s %d records -> %d tokens (target %d; %d -> %d, %d -> %d)\n", size,
					c.Records, c.Tokens, c.Target, c.Below.Records, c.Below.Tokens, c.Above.Records, c.Above.Tokens)
			}
			printf(w, "corpus SHA-256 %s\n", b.SHA256)
			if b.SHA256 == def.CorpusSHA256 {
				printf(w, "identical to the bundle of %s\n", def.ID)
			} else {
				printf(w, "differs from the bundle of %s (corpus SHA-256 %s): a run with it is not that protocol's workload\n", def.ID, def.CorpusSHA256)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tokPath, "tokenizer", "", "tokenizer.json, vocab.json, a folder with either, or a GGUF file")
	f.StringVar(&tmplPath, "template", "", "chat template: .jinja, tokenizer_config.json or GGUF")
	f.StringVar(&out, "out", "", "output folder (must not exist)")
	f.StringVar(&protocolID, "protocol", "", "the protocol the bundle is for (default: the spec's in a Strata checkout, else "+protocol.StandInID+"); a bundle for the spec's under another corpus SHA-256 is refused, not written")
	return cmd
}

// writeBundle writes the bundle built for def into out, unless def's runs
// read its bundle from a folder and this one is under another corpus:
// they would refuse it, so nothing is written.
func writeBundle(b *corpus.Bundle, def protocol.Definition, out string) error {
	if def.Bundle == protocol.BundleCheckout && b.SHA256 != def.CorpusSHA256 {
		return fmt.Errorf("the bundle built for %s hashes to corpus SHA-256 %s, not the protocol's %s: every run of %s would refuse it, so nothing was written to %s",
			def.ID, b.SHA256, def.CorpusSHA256, def.ID, out)
	}
	return b.Write(out)
}

func buildInputs(ctx context.Context, env procstate.State, tokPath, tmplPath string) (corpus.Inputs, error) {
	// A template of its own is checked first: it is a few kilobytes and
	// fails in a millisecond, the tokenizer is 150,000 tokens to read. A
	// GGUF that holds both is a tokenizer first.
	var tmpl *chattemplate.Template
	var err error
	if tmplPath != tokPath {
		if tmpl, err = env.Template(ctx, tmplPath); err != nil {
			return corpus.Inputs{}, err
		}
	}
	tok, err := env.Tokenizer(ctx, tokPath)
	if err != nil {
		return corpus.Inputs{}, err
	}
	if tmpl == nil {
		if tmpl, err = env.Template(ctx, tmplPath); err != nil {
			return corpus.Inputs{}, err
		}
	}
	files, err := tokenizer.SourceFiles(tokPath)
	if err != nil {
		return corpus.Inputs{}, err
	}
	in := corpus.Inputs{Tokenizer: tok, Template: tmpl}
	for _, p := range files {
		s, err := corpus.SourceOf(ctx, p)
		if err != nil {
			return corpus.Inputs{}, fmt.Errorf("tokenizer %s: %w", p, err)
		}
		in.TokenizerSources = append(in.TokenizerSources, s)
	}
	if in.TemplateSource, err = corpus.SourceOf(ctx, tmplPath); err != nil {
		return corpus.Inputs{}, fmt.Errorf("chat template %s: %w", tmplPath, err)
	}
	return in, nil
}

func newCorpusVerify(env procstate.State) *cobra.Command {
	var protocolID string
	cmd := &cobra.Command{
		Use: "verify [DIR]",
		Example: `  strata bench corpus verify
  strata bench corpus verify path/to/standard-v1`,
		Short: "Check a fixture bundle against its manifest and corpus SHA-256",
		Long: `Check every file of a bundle against MANIFEST.sha256 (nothing missing, altered or
extra), the manifest against the corpus SHA-256 of the protocol its build.json
names (or --protocol), and every fixture against the protocol's schedule. DIR
defaults to bench/prompts/` + protocol.BundleName + ` when the current folder has it (a
Strata checkout), otherwise the bundle embedded in this binary. A checkout's
bench/prompts/` + protocol.BundleName + ` is the spec's bundle, so it is held to the spec's
corpus SHA-256 whatever its build.json names. Exit 1 names every file that
differs.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			src := sources(env, "")
			var fsys fs.FS
			where := src.Checkout()
			switch {
			case len(args) == 1:
				where = env.Path(args[0])
				fsys = os.DirFS(where)
			case where != "":
				fsys = os.DirFS(where)
			default:
				where, fsys = prompts.Where, prompts.FS()
			}
			if d, ok := checkoutProtocol(src, where); ok && protocolID == "" {
				// A checkout's bench/prompts/standard-v1 is the spec's bundle,
				// whatever its build.json claims.
				protocolID = d.ID
			}
			if protocolID == "" {
				if data, err := strictjson.ReadFile(fsys, fixtures.BuildName, fixtures.MaxFileBytes); err == nil {
					var named struct {
						ProtocolID string `json:"protocol_id"`
					}
					// A build.json that does not parse names no protocol;
					// fixtures.Load reads it strictly and says why.
					_ = json.Unmarshal(data, &named)
					protocolID = named.ProtocolID
				}
			}
			def, err := src.Protocol(protocolID)
			if err != nil {
				return fmt.Errorf("bundle %s: %w", where, err)
			}
			b, err := fixtures.Load(fsys, where, def)
			var ve *fixtures.VerifyError
			if errors.As(err, &ve) {
				printf(w, "%s\n", ve.Error())
				return checkFailed(fmt.Sprintf("bundle %s failed verification as the bundle of %s (%s)", where, def.ID, humanize.Count(len(ve.Problems), "problem", "problems")))
			}
			if err != nil {
				return err
			}
			printf(w, "bundle %s: every file matches MANIFEST.sha256; corpus SHA-256 %s is that of %s\n", where, b.SHA256, def.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&protocolID, "protocol", "", "the protocol to verify the bundle for (default: the one its build.json names)")
	return cmd
}

// checkoutProtocol is the protocol whose bundle a Strata checkout keeps
// where dir is (bench/prompts/<its bundle name>); false when dir is not
// laid out so.
func checkoutProtocol(src prompts.Sources, dir string) (protocol.Definition, bool) {
	parent, layout := filepath.Dir(filepath.Clean(dir)), filepath.Dir(prompts.CheckoutDir)
	if parent != layout && !strings.HasSuffix(parent, string(filepath.Separator)+layout) {
		return protocol.Definition{}, false
	}
	table := src.Table
	if table == nil {
		table = protocol.Known()
	}
	for _, d := range table {
		if d.Bundle == protocol.BundleCheckout && d.BundleName == filepath.Base(dir) {
			return d, true
		}
	}
	return protocol.Definition{}, false
}
