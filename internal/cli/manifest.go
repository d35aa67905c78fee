package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/protocol"

	"github.com/spf13/cobra"
	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/procstate"
	"github.com/strata-bench/strata/internal/site"
)

func newManifest(env procstate.State) *cobra.Command {
	m := &cobra.Command{
		Use: "manifest",
		Example: `  strata bench manifest verify --repo results-repo
  strata bench manifest add --repo results-repo --results bench-results/RUN \
    --review-pr https://github.com/OWNER/results/pull/12 \
    --reviewed-by maintainer`,
		Short: "Verify or add entries of the approved manifest",
		Args:  noArgs,
		RunE:  groupRunE,
	}
	m.AddCommand(newManifestVerify(env), newManifestAdd(env))
	return m
}

func manifestOptions(env procstate.State, activate []string) (manifest.Options, error) {
	b, err := prompts.Bundle()
	if err != nil {
		return manifest.Options{}, err
	}
	return manifest.Options{Activated: activate, Protocols: env.Protocols, Embedded: b, Now: env.Clock()}, nil
}

const activateHelp = "a protocol ID to treat as activated (repeatable; none by default: a draft has no approved results)"

func newManifestVerify(env procstate.State) *cobra.Command {
	var repoDir string
	var activate []string
	cmd := &cobra.Command{
		Use: "verify [--repo DIR] [--activate PROTOCOL_ID]",
		Example: `  strata bench manifest verify
  strata bench manifest verify --repo results-repo --activate standard-v1`,
		Short: "Verify every entry of bench/approved.json at its evidence commit",
		Long: `Read bench/approved.json on the repository's default branch and verify every
entry: results_path resolved at evidence_commit (from the git objects; no git
binary needed), its SHA-256, every referenced artifact's hash, the strict result
validator, that the evidence commit introduced the report, that the protocol ID
is activated, that the run is neither partial nor nonconforming, and that the
review is not dated after now. A replaced entry (kept, marked replaced_by) is
verified too, and every replaces/replaced_by must name an entry that names it
back, without a loop; a run has one current entry. Every failure names the
entry and the reason; exit 1 if any.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			repo, err := manifest.Open(env.Path(repoDir))
			if err != nil {
				return err
			}
			m, err := repo.ReadManifest()
			if err != nil {
				return err
			}
			o, err := manifestOptions(env, activate)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			bad := 0
			for _, c := range repo.Verify(m, o) {
				if c.OK() {
					printf(w, "ok      %s  %s\n", escape.Line(c.Entry.RunID), escape.Line(c.Entry.ResultsPath))
					if by := c.Entry.ReplacedBy; by != nil {
						printf(w, "        replaced by %s: a preserved record, not the current entry\n", escape.Line(by.String()))
					}
					if len(c.ChangedAfter) > 0 {
						printf(w, "        note: changed on %s after review (%s); the reviewed version is the evidence\n", repo.Branch, strings.Join(c.ChangedAfter, ", "))
					}
					continue
				}
				bad++
				printf(w, "FAILED  %s  %s\n", escape.Line(c.Entry.RunID), escape.Line(c.Entry.ResultsPath))
				for _, p := range c.Problems {
					printf(w, "        %s\n", escape.Line(p))
				}
			}
			printf(w, "%s, %d failed (branch %s at %s)\n", humanize.Count(len(m.Entries), "entry", "entries"), bad, repo.Branch, repo.Head()[:12])
			if bad > 0 {
				return checkFailed(fmt.Sprintf("%s failed verification", humanize.Count(bad, "manifest entry", "manifest entries")))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&repoDir, "repo", ".", "the repository (a checkout or a bare repository)")
	cmd.Flags().StringArrayVar(&activate, "activate", nil, activateHelp)
	return cmd
}

func newManifestAdd(env procstate.State) *cobra.Command {
	var repoDir, results, pr, by, replaces string
	var activate []string
	cmd := &cobra.Command{
		Use: "add --repo DIR --results PATH --review-pr URL --reviewed-by HANDLE [--replaces RUN_ID]",
		Example: `  strata bench manifest add --repo results-repo --results bench-results/RUN \
    --review-pr https://github.com/OWNER/results/pull/12 \
    --reviewed-by maintainer`,
		Short: "Verify a reviewed run and add its entry to bench/approved.json",
		Long: `Verify the report at PATH (bench/results/<folder>/results.json, or the folder)
on the default branch exactly as "manifest verify" would, then write its entry
into the working tree's bench/approved.json (commit it yourself). The evidence
commit is the commit that introduced the report's current version. It refuses a
draft (not activated) protocol, a partial or nonconforming run, a run already in
the manifest, and anything that fails verification.

A new review of a run already approved (its results changed after review, or a
new run that supersedes it) is added with --replaces RUN_ID: the new entry names
the entry it replaces ("replaces": run ID and results SHA-256), and the old
entry stays in the manifest, marked with the entry that replaced it
("replaced_by").`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, f := range []struct{ name, v string }{{"results", results}, {"review-pr", pr}, {"reviewed-by", by}} {
				if err := requireFlag(f.name, f.v); err != nil {
					return err
				}
			}
			dir := env.Path(repoDir)
			repo, err := manifest.Open(dir)
			if err != nil {
				return err
			}
			o, err := manifestOptions(env, activate)
			if err != nil {
				return err
			}
			current, err := manifest.ReadWorktreeManifest(dir)
			if err != nil {
				return err
			}
			m, err := repo.Add(current, manifest.AddOptions{Options: o, ResultsPath: results, ReviewPR: pr, ReviewedBy: by, Replaces: replaces})
			if err != nil {
				return err
			}
			if err := manifest.WriteWorktreeManifest(dir, m); err != nil {
				return err
			}
			e := m.Entries[len(m.Entries)-1]
			printf(cmd.OutOrStdout(), "added %s (evidence commit %s, results %s) to %s\n", e.RunID, e.EvidenceCommit, e.ResultsSHA256[:12], manifest.Path)
			if e.Replaces != nil {
				printf(cmd.OutOrStdout(), "replacing %s, which stays in the manifest marked replaced_by\n", escape.Line(e.Replaces.String()))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&repoDir, "repo", ".", "the repository checkout")
	f.StringVar(&results, "results", "", "bench/results/<folder>/results.json (or the folder), repository-relative")
	f.StringVar(&pr, "review-pr", "", "the benchmark pull request's URL")
	f.StringVar(&by, "reviewed-by", "", "the reviewing maintainer's GitHub handle")
	f.StringVar(&replaces, "replaces", "", "the run ID whose current entry this review replaces (the old entry is kept, marked replaced_by)")
	f.StringArrayVar(&activate, "activate", nil, activateHelp)
	return cmd
}

func newSite(env procstate.State) *cobra.Command {
	var repoDir, out, addr string
	var activate []string
	var serve bool
	cmd := &cobra.Command{
		Use: "site --repo DIR --out DIR [--activate PROTOCOL_ID] [--serve]",
		Example: `  strata bench site --repo results-repo --out site
  strata bench site --repo results-repo --out site --serve`,
		Short: "Build the static results website from the repository",
		Long: `Build a static website from the repository's default branch: the standard list
shows only verified, approved entries of activated protocols (their data from the
evidence commit), with comparison tables by prompt case and filters by GPU,
model, quantization and track; every other report in bench/results (draft,
partial, nonconforming, legacy, unreviewed, unverifiable, replaced) is on its own
page with a conspicuous label; each run has a page with identity, per-case medians with
ranges, the Capped column, sanity verdicts, concurrency rounds, evidence with
hashes, and SVG charts. Entries that fail verification are listed with the
reason. Of a result folder only its results.json, README.md and the artifacts
results.json lists (with matching hashes) are published, each as text under its
name plus .txt; every page carries a Content-Security-Policy that allows nothing
inline. --serve previews the site on 127.0.0.1 with the same policy, nosniff, and
text/plain for all evidence. A repository holding bench/DEMONSTRATION.md (the
committed test repository does) is labelled demonstration data on every page.

--repo is the repository's root (its top folder, or a bare repository); any
other folder is refused with exit 2. To see result folders of your own on these
pages, use bench view.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := requireFlag("out", out); err != nil {
				return err
			}
			if serve {
				if err := previewAddr(addr); err != nil {
					return err
				}
			}
			repo, err := manifest.OpenRoot(env.Path(repoDir))
			if errors.Is(err, manifest.ErrNotRoot) {
				return notRepoRoot(repoDir, env.Path(repoDir))
			}
			if err != nil {
				return err
			}
			o, err := manifestOptions(env, activate)
			if err != nil {
				return err
			}
			s, err := site.Collect(repo, o)
			if err != nil {
				return err
			}
			dir := env.Path(out)
			if err := site.Build(s, dir); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, warn := range s.Warnings {
				printf(cmd.ErrOrStderr(), "warning: %s\n", escape.Line(warn))
			}
			printf(w, "site: %s (%d approved, %d other)\n", dir, len(s.Approved), len(s.Others))
			if s.Demo {
				printf(w, "every page is labelled demonstration data: the repository holds %s\n", site.DemoMarker)
			}
			if !serve {
				return nil
			}
			return serveDir(cmd.Context(), dir, addr, w)
		},
	}
	f := cmd.Flags()
	f.StringVar(&repoDir, "repo", ".", "the repository's root: a checkout's top folder, or a bare repository")
	f.StringVar(&out, "out", "", "output folder (new, empty, or an earlier strata site)")
	f.StringArrayVar(&activate, "activate", nil, activateHelp)
	f.BoolVar(&serve, "serve", false, "serve the site on loopback until Ctrl-C")
	f.StringVar(&addr, "addr", "127.0.0.1:8000", "loopback address for --serve")
	return cmd
}

// previewAddr checks --addr of a preview: loopback only.
func previewAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || !protocol.IsLoopback(host) {
		return usagef("--addr %q: the preview serves on loopback only", addr)
	}
	return nil
}

// serveDir serves a built site or view on addr (loopback) until ctx ends.
func serveDir(ctx context.Context, dir, addr string, w interface{ Write([]byte) (int, error) }) error {
	if err := previewAddr(addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: site.Handler(dir), ReadHeaderTimeout: 5 * time.Second}
	printf(w, "serving http://%s/ (Ctrl-C stops)\n", ln.Addr())
	go func() {
		<-ctx.Done()
		// Close ends Serve below, which returns ErrServerClosed; the
		// preview has nothing left to report.
		_ = srv.Close()
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// notRepoRoot is bench site's usage error for a --repo that is not a
// repository's root; a result folder, or a folder of them, is pointed to
// bench view.
func notRepoRoot(arg, dir string) error {
	msg := fmt.Sprintf("--repo %s is %v", arg, manifest.ErrNotRoot)
	switch held := resultFoldersIn(arg, dir); {
	case isResultFolder(dir):
		msg += "; it is a result folder: strata bench view " + arg + " shows it on the site's pages"
	case len(held) > 0:
		msg += "; it holds result folders: strata bench view " + strings.Join(held, " ") + " shows them on the site's pages"
	}
	return usagef("%s", msg)
}
