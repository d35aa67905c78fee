// Package site builds the static results website from a repository: the
// standard list shows only verified, approved entries of activated
// protocols (their data taken from the evidence commit); everything else in
// bench/results (draft, partial, nonconforming, legacy, unreviewed,
// unverifiable) is reachable on its own page with a conspicuous label.
// Comparison tables expose protocol, model, quantization, track, prompt
// case, actual input lengths and cache counts, and concurrency; there is no
// combined score and nothing is pooled. Every string from a submission is
// escaped by html/template, and every page carries a Content-Security-Policy
// that allows nothing inline, so a string that ever slipped through would
// still not run. Of a result folder the site publishes only the evidence it
// means to (see Run.Evidence), each file as plain text.
//
// Approved runs of one protocol and model are also put side by side on
// compare pages (compare/<slug>-vs-<slug>.html), built by compare.New with
// the refusals and warnings of bench compare; which pairs get one is
// bounded (see maxPairs). Every page fits a laptop's and a phone's width
// without scrolling sideways, and every number is written by package
// quantity.
package site

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/manifest"
	"github.com/strata-bench/strata/internal/protocol"
)

// Labels of a run on the site.
const (
	LabelApproved      = "approved"
	LabelDraft         = "draft"
	LabelPartial       = "partial"
	LabelNonconforming = "nonconforming"
	LabelLegacy        = "legacy"
	LabelUnreviewed    = "unreviewed"
	LabelUnverifiable  = "unverifiable"
	// LabelReplaced is an approved entry a later review replaced: the
	// manifest keeps it (marked replaced_by), and so does the site.
	LabelReplaced = "replaced"
)

// Policy is the Content-Security-Policy of every page: scripts, styles
// and images only from the site itself, nothing inline, no <base>, no
// forms.
const Policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'"

// DemoMarker is the file on a repository's default branch that marks it
// as demonstration data, as strata's committed test repository is: every
// page of its site says so.
const DemoMarker = "bench/DEMONSTRATION.md"

// TextSuffix is added to the name of every published file, so that any
// static host serves it as text/plain, whatever a submitter named it.
const TextSuffix = ".txt"

// Run is one result folder as the site shows it.
type Run struct {
	Slug    string
	Folder  string
	Label   string
	Reasons []string
	Results *contract.Results // nil for legacy or unreadable folders
	// Files are all the folder's files; only Evidence() of them is
	// published.
	Files   map[string][]byte
	Entry   *manifest.Entry
	Changed []string // files changed after review
	// ReplacedBy is, on a replaced entry's run, the run of the entry that
	// replaced it (nil when that one is not shown: it did not verify);
	// Replaces, on that run, the replaced one.
	ReplacedBy, Replaces *Run
}

// Evidence is one file a run page lists.
type Evidence struct {
	Kind, Name, SHA256 string
	// Withheld says why a listed artifact is not published; it is empty
	// for a published file.
	Withheld string
	data     []byte
}

// Published reports whether the site publishes the file.
func (e Evidence) Published() bool { return e.Withheld == "" }

// Evidence lists what the run page shows and the site publishes: the
// artifacts results.json lists (published only with a kind of the format, a
// plain file name, and bytes that hash to the listed SHA-256), then
// results.json and README.md. A legacy or unreadable folder offers only its
// README.md. Nothing else of a folder is ever published: a submitter's
// other files never reach the site's origin.
func (r *Run) Evidence() []Evidence {
	var out []Evidence
	published := map[string]bool{}
	if r.Results != nil {
		for _, a := range r.Results.Artifacts {
			e := Evidence{Kind: a.Kind, Name: a.Path, SHA256: a.SHA256, Withheld: r.withhold(a)}
			if e.Published() && published[strings.ToLower(a.Path)] {
				// Without case too: on the file system of a Mac or Windows
				// the second would overwrite the first.
				e.Withheld = "another listed file has the same name"
			}
			if e.Published() {
				e.data, published[strings.ToLower(a.Path)] = r.Files[a.Path], true
			}
			out = append(out, e)
		}
	}
	reports := []string{contract.ReadmeFile}
	if r.Results != nil {
		reports = []string{contract.ResultsFile, contract.ReadmeFile}
	}
	for _, name := range reports {
		if data, ok := r.Files[name]; ok && !published[strings.ToLower(name)] {
			out = append(out, Evidence{Kind: "report", Name: name, SHA256: sha256Hex(data), data: data})
			published[strings.ToLower(name)] = true
		}
	}
	return out
}

// withhold says why a listed artifact is not published ("" if it is).
func (r *Run) withhold(a contract.Artifact) string {
	switch a.Kind {
	case contract.ArtifactConfig, contract.ArtifactEngineLog, contract.ArtifactOutputs, contract.ArtifactProvenance:
	default:
		return "not an artifact kind of the format"
	}
	if !plainName(a.Path) {
		return "not a plain file name in the folder"
	}
	data, ok := r.Files[a.Path]
	if !ok {
		return "not in the folder"
	}
	if sha256Hex(data) != a.SHA256 {
		return "its bytes do not hash to the listed SHA-256"
	}
	return ""
}

// plainName reports whether a listed path is one file name of the folder
// itself that is safe to write anywhere: not hidden, no separator of any
// system, no "..", no drive or stream colon, no control character, and
// short enough for every file system once TextSuffix is added.
func plainName(p string) bool {
	if p == "" || len(p) > 200 || !utf8.ValidString(p) || strings.HasPrefix(p, ".") ||
		strings.Contains(p, "..") || strings.ContainsAny(p, `/\:`) || filepath.IsAbs(p) {
		return false
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return false
		}
	}
	return true
}

// Site is everything a build shows.
type Site struct {
	Approved []*Run
	Others   []*Run
	// Warnings say why an entry is not shown as approved.
	Warnings []string
	Branch   string
	Head     string
	// Local marks a view of result folders on this machine (View): every
	// page says LocalMark, and its runs are in Others.
	Local bool
	// Demo is whether the repository marks itself as demonstration data
	// (DemoMarker on its default branch): every page then says so.
	Demo bool
}

// runs are the site's runs, the approved first.
func (s *Site) runs() []*Run { return append(append([]*Run{}, s.Approved...), s.Others...) }

// Collect reads the manifest and every result folder of the repository's
// default branch.
func Collect(repo *manifest.Repo, o manifest.Options) (*Site, error) {
	s := &Site{Branch: repo.Branch, Head: repo.Head()}
	demo, err := marked(repo)
	if err != nil {
		return nil, err
	}
	s.Demo = demo
	approvedFolders := map[string]bool{}
	failed := map[string][]string{}
	var replaced []*Run
	m, err := repo.ReadManifest()
	switch {
	case errors.Is(err, manifest.ErrNoFile):
		s.Warnings = append(s.Warnings, "no "+manifest.Path+" on "+repo.Branch+": no run is approved")
	case err != nil:
		return nil, err
	default:
		approvedFolders, failed, replaced = s.addEntries(repo.Verify(m, o))
	}
	folders, err := repo.Folders()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(folders))
	for n := range folders {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if approvedFolders[name] {
			continue
		}
		r := classify(name, folders[name], o)
		if reasons, ok := failed[name]; ok {
			// It is in the manifest but did not verify: its problems are the
			// whole story.
			r.Label, r.Reasons = LabelUnverifiable, []string{"in the approved manifest, but it failed verification: " + strings.Join(reasons, "; ")}
		}
		s.Others = append(s.Others, r)
	}
	s.Others = append(s.Others, replaced...)
	AssignSlugs(s)
	return s, nil
}

// marked reports whether the default branch holds DemoMarker. Only the
// repository itself says it is a demonstration: a site of any other
// repository carries no such label.
func marked(repo *manifest.Repo) (bool, error) {
	head, err := repo.Commit(repo.Head())
	if err != nil {
		return false, err
	}
	_, err = repo.File(head, DemoMarker)
	if errors.Is(err, manifest.ErrNoFile) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s on %s: %w", DemoMarker, repo.Branch, err)
	}
	return true, nil
}

// addEntries puts the manifest's verified entries on the site: a current
// entry is approved, a replaced one is returned (for the other runs) with
// the label replaced, and the two ends of each replacement are linked. It
// returns the folders the entries show and, by folder, the problems of
// the entries that failed verification.
func (s *Site) addEntries(checked []*manifest.Checked) (shown map[string]bool, failed map[string][]string, replaced []*Run) {
	shown, failed = map[string]bool{}, map[string][]string{}
	byRef := map[manifest.EntryRef]*Run{}
	for _, c := range checked {
		folder := path.Base(path.Dir(c.Entry.ResultsPath))
		if !c.OK() {
			failed[folder] = append(failed[folder], c.Problems...)
			s.Warnings = append(s.Warnings, fmt.Sprintf("entry %s (%s) is not shown as approved: %s", c.Entry.RunID, c.Entry.ResultsPath, strings.Join(c.Problems, "; ")))
			continue
		}
		e := c.Entry
		shown[folder] = true
		r := &Run{Folder: folder, Label: LabelApproved, Results: c.Results, Files: c.Files, Entry: &e, Changed: c.ChangedAfter}
		byRef[e.Ref()] = r
		if e.Current() {
			s.Approved = append(s.Approved, r)
			continue
		}
		r.Label, r.Reasons = LabelReplaced, []string{"replaced by a later review of " + e.ReplacedBy.String() + "; the manifest keeps this entry as the spec asks"}
		replaced = append(replaced, r)
	}
	for _, r := range replaced {
		// A verified mark is mutual (manifest.Verify), so the entry that
		// replaced r, when shown, replaces r.
		if by := byRef[*r.Entry.ReplacedBy]; by != nil {
			r.ReplacedBy, by.Replaces = by, r
		}
	}
	return shown, failed, replaced
}

// classify labels a folder that is not an approved entry.
func classify(name string, files map[string][]byte, o manifest.Options) *Run {
	r := &Run{Folder: name, Files: files}
	data, ok := files[contract.ResultsFile]
	if !ok {
		r.Label, r.Reasons = LabelLegacy, []string{"no results.json: a community report in another format"}
		return r
	}
	var head struct {
		Format        string `json:"format"`
		SchemaVersion int    `json:"schema_version"`
	}
	if json.Unmarshal(data, &head) != nil || head.Format != protocol.ResultFormat || head.SchemaVersion != protocol.SchemaVersion {
		r.Label, r.Reasons = LabelLegacy, []string{"not the strata-standard-benchmark format (schema 1): legacy/nonstandard for this protocol"}
		return r
	}
	var res contract.Results
	if err := json.Unmarshal(data, &res); err != nil {
		r.Label, r.Reasons = LabelLegacy, []string{"results.json does not parse: " + err.Error()}
		return r
	}
	r.Results = &res
	activated := false
	for _, a := range o.Activated {
		activated = activated || a == res.Protocol.ID
	}
	switch {
	case !activated:
		r.Label = LabelDraft
		r.Reasons = []string{"protocol " + res.Protocol.ID + " is a draft (not activated): pilot data, not a standard result"}
	case res.Run.Status == contract.StatusNonconforming:
		r.Label = LabelNonconforming
	case res.Run.Status == contract.StatusPartial:
		r.Label = LabelPartial
	default:
		r.Label = LabelUnreviewed
		r.Reasons = []string{"not in the approved manifest: a merged report is not an approved one"}
	}
	r.Reasons = append(r.Reasons, statusReasons(&res)...)
	return r
}

// statusReasons are why a nonconforming or partial run has its status.
func statusReasons(res *contract.Results) []string {
	switch sr := res.Extensions.StatusReasons; res.Run.Status {
	case contract.StatusNonconforming:
		return contract.Texts(sr.Nonconforming)
	case contract.StatusPartial:
		return contract.Texts(sr.Partial)
	}
	return nil
}

// AssignSlugs gives every run a unique, safe page name: submitted folder
// names and run IDs never become paths as they are.
func AssignSlugs(s *Site) {
	for _, r := range s.runs() {
		key := r.Folder
		if r.Label == LabelReplaced {
			// A run reviewed again keeps its folder: its replaced entry's
			// page is named by the results it approved as well.
			key += "\x00" + r.Entry.ResultsSHA256
		}
		h := sha256.Sum256([]byte(key))
		// A local view's folder is a path (an approved site's, one name):
		// its last element names the page, the whole path keeps it unique.
		slug := contract.Slug(path.Base(r.Folder))
		if slug == "" {
			slug = "run"
		}
		r.Slug = slug + "-" + hex.EncodeToString(h[:4])
	}
}

//go:embed assets/*
var assets embed.FS

// Build writes the site into out. A folder that exists must be an earlier
// strata site (it holds the marker file), which is then replaced; the new
// site is written to a temporary folder and renamed into place.
func Build(s *Site, out string) error {
	const marker = ".strata-site"
	if st, err := os.Stat(out); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("--out %s is a file", out)
		}
		if _, err := os.Stat(filepath.Join(out, marker)); err != nil {
			entries, err := os.ReadDir(out)
			if err != nil {
				return fmt.Errorf("--out %s: %w", out, err)
			}
			if len(entries) > 0 {
				return fmt.Errorf("--out %s exists and is not a strata site; choose an empty or new folder", out)
			}
		}
	}
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(out)+".building-")
	if err != nil {
		return err
	}
	ok := false
	defer func() {
		if !ok {
			// Best effort: the build's own error is the one to report.
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := render(s, tmp); err != nil {
		return err
	}
	by := "built by strata bench site\n"
	if s.Local {
		by = "built by strata bench view: " + LocalMark + "\n"
	}
	if err := os.WriteFile(filepath.Join(tmp, marker), []byte(by), 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	old := ""
	if _, err := os.Stat(out); err == nil {
		old = out + ".old"
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("remove an earlier copy of the site: %w", err)
		}
		if err := os.Rename(out, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, out); err != nil {
		if old != "" {
			// The previous site goes back where it was: a failed build
			// loses nothing. Its own error, if any, is secondary to this one.
			_ = os.Rename(old, out)
		}
		return err
	}
	ok = true
	if old != "" {
		// Best effort: the new site is in place whether or not its
		// predecessor goes, and the next build removes what is left.
		_ = os.RemoveAll(old)
	}
	return nil
}

func render(s *Site, dir string) error {
	t, err := template.New("").Funcs(funcs).Funcs(siteFuncs(s)).ParseFS(assets, "assets/*.html")
	if err != nil {
		return err
	}
	for _, name := range []string{"style.css", "filter.js"} {
		data, err := assets.ReadFile("assets/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	write := func(name, tmpl string, data any) error {
		page, err := execute(t, tmpl, data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return os.WriteFile(filepath.Join(dir, name), page, 0o644)
	}
	all, pairsOf := pairs(s)
	if err := writeIndex(s, all, write); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		return err
	}
	runs := s.runs()
	err = each(len(runs), func(i int) error {
		r := runs[i]
		evidence := r.Evidence() // once: it hashes every listed file
		if err := writeEvidence(filepath.Join(dir, "runs", r.Slug), evidence); err != nil {
			return fmt.Errorf("evidence of %s: %w", r.Folder, err)
		}
		return write(filepath.Join("runs", r.Slug+".html"), "run.html", runPage(r, evidence, pairsOf[r]))
	})
	if err != nil {
		return err
	}
	// Compare pages are not under runs/: everything there but a run's page
	// is its evidence, served as text.
	var compared []*pair
	for _, p := range all {
		if p.Cmp != nil {
			compared = append(compared, p)
		}
	}
	if len(compared) == 0 {
		return nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "compare"), 0o755); err != nil {
		return err
	}
	return each(len(compared), func(i int) error {
		p := compared[i]
		return write(filepath.Join("compare", p.Name+".html"), "compare.html", compareData(p))
	})
}

// writeIndex writes the approved site's index.html and other.html, or a
// local view's index.html (its folders and their pairs).
func writeIndex(s *Site, all []*pair, write func(name, tmpl string, data any) error) error {
	if s.Local {
		return write("index.html", "view.html", viewIndex{Runs: s.Others, Pairs: all})
	}
	if err := write("index.html", "index.html", indexData(s)); err != nil {
		return err
	}
	return write("other.html", "other.html", s)
}

// execute renders a page. html/template escapes markup but leaves the
// characters that act on a display unseen: a bidirectional override in a
// submitted name reorders the text around it, a C1 control or an invalid
// byte hides itself. Every one of them in the page is written as the
// terminal shows it (escape.Text: \u202e, \u0085, \xff); the pages'
// own text has none, only line feeds and tabs, which stay.
func execute(t *template.Template, name string, data any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, data); err != nil {
		return nil, err
	}
	return []byte(escape.Text(b.String())), nil
}

// each calls f(0) ... f(n-1), on as many goroutines as there are CPUs, and
// returns the first error. Every page has its own file, and a parsed
// template may be executed concurrently.
func each(n int, f func(i int) error) error {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		first    error
		next     atomic.Int64
		failed   atomic.Bool
		nWorkers = min(runtime.GOMAXPROCS(0), n)
	)
	for range nWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// writeEvidence writes a run's published files into its folder, each under
// its name plus TextSuffix: a static host then serves even an evil.html or
// an evil.svg as text, never as a page, an image or a script.
func writeEvidence(dir string, files []Evidence) error {
	made := false
	for _, e := range files {
		if !e.Published() {
			continue
		}
		if !made {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			made = true
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name+TextSuffix), e.data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
