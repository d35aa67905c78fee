// Package manifest is the approved manifest (bench/approved.json): its
// format, reading the repository's git objects with go-git (no git binary),
// and verifying each entry at its evidence commit exactly as "Future
// approved manifest" says: the results file and every referenced artifact
// hash-checked at that commit, the folder re-validated, and the evidence
// commit shown to be the one that introduced the reviewed report.
package manifest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/strata-bench/strata/internal/atomicfile"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/escape"
	"github.com/strata-bench/strata/internal/fixtures"
	"github.com/strata-bench/strata/internal/jsonfmt"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/strictjson"
	"github.com/strata-bench/strata/internal/validate"
)

// Format and version of the manifest.
const (
	Format        = "strata-approved-benchmarks"
	SchemaVersion = 1
	// Path is the manifest's place in the repository.
	Path = "bench/approved.json"
	// ResultsDir holds the submitted result folders.
	ResultsDir = "bench/results"
)

// Verification values.
const (
	EvidenceReviewed        = "evidence-reviewed"
	IndependentlyReproduced = "independently-reproduced"
)

// Entry is one approved run, field for field as the spec shows it.
type Entry struct {
	RunID              string   `json:"run_id"`
	ProtocolID         string   `json:"protocol_id"`
	ResultsPath        string   `json:"results_path"`
	ResultsSHA256      string   `json:"results_sha256"`
	EvidenceCommit     string   `json:"evidence_commit"`
	ReviewPR           string   `json:"review_pr"`
	ReviewedBy         string   `json:"reviewed_by"`
	ReviewedAt         string   `json:"reviewed_at"`
	Verification       string   `json:"verification"`
	ReproductionRunIDs []string `json:"reproduction_run_ids"`
	// Replaces and ReplacedBy mark a replacement ("changes to results
	// require a newly reviewed entry/hash; preserve old records or mark
	// their replacement explicitly"): the new entry names the one it
	// replaces, the old one, kept, names the one that replaced it. Both are
	// optional, and absent on an entry that is neither.
	Replaces   *EntryRef `json:"replaces,omitempty"`
	ReplacedBy *EntryRef `json:"replaced_by,omitempty"`
}

// Manifest is bench/approved.json.
type Manifest struct {
	Format        string  `json:"format"`
	SchemaVersion int     `json:"schema_version"`
	Entries       []Entry `json:"entries"`
}

// Parse reads a manifest strictly: unknown keys, another format or version
// are errors.
func Parse(data []byte) (*Manifest, error) {
	if err := strictjson.Check(data); err != nil {
		return nil, fmt.Errorf("%s is not strict JSON: %w", Path, err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %w", Path, err)
	}
	if m.Format != Format || m.SchemaVersion != SchemaVersion {
		return nil, fmt.Errorf("%s: format %q version %d; expected %q version %d", Path, m.Format, m.SchemaVersion, Format, SchemaVersion)
	}
	if m.Entries == nil {
		return nil, fmt.Errorf("%s: entries must be an array", Path)
	}
	return &m, nil
}

// Marshal writes the manifest (two-space JSON, trailing newline).
func (m *Manifest) Marshal() ([]byte, error) { return jsonfmt.Indent(m) }

// Repo reads a repository's objects.
type Repo struct {
	r    *git.Repository
	Dir  string
	head *object.Commit
	// Branch is the default branch's name.
	Branch string
}

// Open opens the repository at dir and resolves its default branch: the
// branch HEAD names, else main, else master.
func Open(dir string) (*Repo, error) {
	// The folder itself first: a bare repository has no .git to detect, and
	// detection would walk up into an enclosing checkout.
	r, err := git.PlainOpen(dir)
	if errors.Is(err, git.ErrRepositoryNotExists) {
		r, err = git.PlainOpenWithOptions(dir, &git.PlainOpenOptions{DetectDotGit: true})
	}
	if err != nil {
		return nil, fmt.Errorf("repository %s: %w", dir, err)
	}
	repo := &Repo{r: r, Dir: dir}
	var ref *plumbing.Reference
	if h, err := r.Reference(plumbing.HEAD, false); err == nil && h.Type() == plumbing.SymbolicReference {
		if res, err := r.Reference(h.Target(), true); err == nil {
			ref = res
		}
	}
	for _, name := range []string{"main", "master"} {
		if ref != nil {
			break
		}
		if res, err := r.Reference(plumbing.NewBranchReferenceName(name), true); err == nil {
			ref = res
		}
	}
	if ref == nil {
		return nil, fmt.Errorf("repository %s: no default branch (HEAD, main or master)", dir)
	}
	repo.Branch = ref.Name().Short()
	if repo.head, err = r.CommitObject(ref.Hash()); err != nil {
		return nil, fmt.Errorf("repository %s: %w", dir, err)
	}
	return repo, nil
}

// Head is the default branch's commit.
func (r *Repo) Head() string { return r.head.Hash.String() }

// ErrNoFile is returned when a path is absent at a commit.
var ErrNoFile = errors.New("no such file at that commit")

// File returns a file's bytes at a commit.
func (r *Repo) File(c *object.Commit, p string) ([]byte, error) {
	f, err := c.File(p)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("%s: %w", p, ErrNoFile)
	}
	if err != nil {
		return nil, err
	}
	rd, err := f.Reader()
	if err != nil {
		return nil, err
	}
	// Closing a blob's reader only releases it: the read's outcome is
	// ReadAll's.
	defer func() { _ = rd.Close() }()
	return io.ReadAll(rd)
}

// Commit resolves a full commit ID.
func (r *Repo) Commit(id string) (*object.Commit, error) {
	if !fullCommit.MatchString(id) {
		return nil, fmt.Errorf("%q is not a full 40-character commit ID", id)
	}
	return r.r.CommitObject(plumbing.NewHash(id))
}

var fullCommit = regexp.MustCompile(`^[0-9a-f]{40}$`)

// blobHash is a path's blob at a commit ("" when absent).
func blobHash(c *object.Commit, p string) string {
	t, err := c.Tree()
	if err != nil {
		return ""
	}
	e, err := t.FindEntry(p)
	if err != nil {
		return ""
	}
	return e.Hash.String()
}

// firstParents lists the default branch's first-parent history, newest
// first. Comparing tree entries along it is much faster than go-git's Log
// with a path filter.
func (r *Repo) firstParents() []*object.Commit {
	var out []*object.Commit
	for c := r.head; c != nil; {
		out = append(out, c)
		if c.NumParents() == 0 {
			break
		}
		p, err := c.Parent(0)
		if err != nil {
			break
		}
		c = p
	}
	return out
}

// Introduced returns the commit on the default branch that introduced the
// current version of path: the oldest commit of the unbroken run of
// first-parent commits holding the same blob as the head.
func (r *Repo) Introduced(p string) (*object.Commit, error) {
	want := blobHash(r.head, p)
	if want == "" {
		return nil, fmt.Errorf("%s is not on the default branch (%s)", p, r.Branch)
	}
	var intro *object.Commit
	for _, c := range r.firstParents() {
		if blobHash(c, p) != want {
			break
		}
		intro = c
	}
	return intro, nil
}

// onBranch reports whether commit id is in the default branch's
// first-parent history.
func (r *Repo) onBranch(id string) bool {
	for _, c := range r.firstParents() {
		if c.Hash.String() == id {
			return true
		}
	}
	return false
}

// ReadManifest reads bench/approved.json on the default branch.
func (r *Repo) ReadManifest() (*Manifest, error) {
	data, err := r.File(r.head, Path)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", Path, r.Branch, err)
	}
	return Parse(data)
}

// Checked is one entry's verification.
type Checked struct {
	Entry    Entry
	Problems []string
	// Results is the verified results.json (from the evidence commit).
	Results *contract.Results
	// Files are the report folder's files at the evidence commit.
	Files map[string][]byte
	// ChangedAfter lists files of the report that differ on the default
	// branch from the reviewed version (they need a new review).
	ChangedAfter []string
}

// OK reports whether the entry verified.
func (c *Checked) OK() bool { return len(c.Problems) == 0 }

// Options of a verification.
type Options struct {
	// Activated protocol IDs: the spec forbids a populated manifest for the
	// draft, so none is activated unless configured.
	Activated []string
	// Protocols are the protocols strata knows (nil: the table it ships)
	// and Embedded the bundle strata carries (the stand-in's). A protocol
	// whose bundle is a checkout's is verified against the bundle the
	// repository holds at the evidence commit.
	Protocols protocol.Table
	Embedded  *fixtures.Bundle
	// Now is the time of the check: a review is not dated after it (and
	// Add dates a new entry with it).
	Now time.Time
}

func (o Options) activated(id string) bool {
	for _, a := range o.Activated {
		if a == id {
			return true
		}
	}
	return false
}

// Verify checks every entry, replaced ones included, how the entries mark
// their replacements, and that each reproduction run ID names another
// approved entry of the manifest (the run's current one) that itself
// verifies.
func (r *Repo) Verify(m *Manifest, o Options) []*Checked {
	var out []*Checked
	seen := map[string]int{}
	marks := replacementProblems(m.Entries)
	for i, e := range m.Entries {
		c := r.Check(e, o)
		c.Problems = append(c.Problems, marks[i]...)
		if j, ok := seen[e.RunID]; !ok || e.Current() || !m.Entries[j].Current() {
			seen[e.RunID] = len(out)
		}
		out = append(out, c)
	}
	for _, c := range out {
		for _, id := range c.Entry.ReproductionRunIDs {
			i, ok := seen[id]
			switch {
			case !ok:
				c.Problems = append(c.Problems, fmt.Sprintf("reproduction run ID %q is not an entry of the approved manifest", id))
			case id == c.Entry.RunID:
				c.Problems = append(c.Problems, "a run cannot reproduce itself")
			case len(out[i].Problems) > 0:
				c.Problems = append(c.Problems, fmt.Sprintf("reproduction run %q does not verify", id))
			}
		}
	}
	return out
}

// badReviewPR says why a review link is not an https URL of a pull request
// page ("" when it is): the site links it, and a javascript: or data: link
// there would run on the site's origin.
func badReviewPR(s string) string {
	u, err := url.Parse(s)
	switch {
	case s == "":
		return "is required"
	case err != nil:
		return "is not a URL: " + err.Error()
	case u.Scheme != "https":
		return "is not an https URL"
	case u.Host == "" || u.User != nil:
		return "has no plain host"
	case strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return "has spaces or control characters"
	}
	return ""
}

// badReviewer says why a reviewer's name is not one line of plain text
// ("" when it is): the site, the terminal and the approval commit show
// it, where a control or bidirectional formatting character would act
// instead of being read. The name is quoted with those escaped.
func badReviewer(s string) string {
	switch {
	case s == "":
		return "is required"
	case !utf8.ValidString(s):
		return fmt.Sprintf("\"%s\" is not valid UTF-8", escape.Line(s))
	case strings.IndexFunc(s, escape.Hidden) >= 0:
		return fmt.Sprintf("\"%s\" has control or bidirectional formatting characters; a name is plain text", escape.Line(s))
	}
	return ""
}

// reviewedBefore says why a review dated at cannot have seen the evidence
// commit ("" when it can): it is dated before the commit was made.
func reviewedBefore(at string, commit *object.Commit) string {
	t, err := time.Parse(time.RFC3339, at)
	made := commit.Committer.When
	if err != nil || !t.Before(made) {
		return ""
	}
	return fmt.Sprintf("reviewed_at %s is before its evidence commit %s was made (%s): a review cannot have seen it",
		at, commit.Hash.String()[:12], made.UTC().Format(time.RFC3339))
}

// Check verifies one entry at its evidence commit.
func (r *Repo) Check(e Entry, o Options) *Checked {
	c := &Checked{Entry: e}
	c.checkReview(o)
	if !validResultsPath(e.ResultsPath) {
		c.bad("results_path %q is not bench/results/<folder>/results.json", e.ResultsPath)
		return c
	}
	commit, ok := r.evidence(c)
	if !ok {
		return c
	}
	if why := reviewedBefore(e.ReviewedAt, commit); why != "" {
		c.bad("%s", why)
	}
	dir := path.Dir(e.ResultsPath)
	files, ok := r.validateFolder(c, commit, dir, o)
	if !ok {
		return c
	}
	// Evidence changed after review needs another review.
	for name, b := range files {
		now, err := r.File(r.head, dir+"/"+name)
		if err != nil || !bytes.Equal(now, b) {
			c.ChangedAfter = append(c.ChangedAfter, name)
		}
	}
	sort.Strings(c.ChangedAfter)
	return c
}

// bad adds a problem.
func (c *Checked) bad(format string, a ...any) {
	c.Problems = append(c.Problems, fmt.Sprintf(format, a...))
}

// checkReview checks the entry's own fields: an activated protocol, a
// known verification with its reproductions, and who reviewed it, when
// and where.
func (c *Checked) checkReview(o Options) {
	e := c.Entry
	if !o.activated(e.ProtocolID) {
		c.bad("protocol %q is not activated: a draft protocol has no approved results", e.ProtocolID)
	}
	switch e.Verification {
	case EvidenceReviewed:
	case IndependentlyReproduced:
		if len(e.ReproductionRunIDs) == 0 {
			c.bad("verification %q needs the linked approved reproduction run IDs", e.Verification)
		}
	default:
		c.bad("verification %q is neither %q nor %q", e.Verification, EvidenceReviewed, IndependentlyReproduced)
	}
	if e.ReproductionRunIDs == nil {
		c.bad("reproduction_run_ids must be an array")
	}
	if at, err := time.Parse(time.RFC3339, e.ReviewedAt); err != nil || !strings.HasSuffix(e.ReviewedAt, "Z") {
		c.bad("reviewed_at %q is not a UTC ISO 8601 time", e.ReviewedAt)
	} else if at.After(o.Now) {
		c.bad("reviewed_at %s is after the time of this check (%s): a review cannot be dated in the future", e.ReviewedAt, o.Now.UTC().Format(time.RFC3339))
	}
	if why := badReviewer(e.ReviewedBy); why != "" {
		c.bad("reviewed_by %s", why)
	}
	if why := badReviewPR(e.ReviewPR); why != "" {
		c.bad("review_pr %q %s", e.ReviewPR, why)
	}
}

// validResultsPath reports whether p is a canonical
// bench/results/<folder>/results.json: the entry's folder is read from it.
func validResultsPath(p string) bool {
	clean := path.Clean(p)
	return clean == p && !strings.HasPrefix(clean, "/") && !strings.Contains(clean, "..") &&
		strings.HasPrefix(clean, ResultsDir+"/") && path.Base(clean) == contract.ResultsFile
}

// evidence resolves the entry's evidence commit and checks that it is on
// the default branch, holds the approved results.json and introduced it.
// It reports false when the commit or the file cannot be read, and nothing
// more can be checked.
func (r *Repo) evidence(c *Checked) (*object.Commit, bool) {
	e := c.Entry
	commit, err := r.Commit(e.EvidenceCommit)
	if err != nil {
		c.bad("evidence_commit: %v", err)
		return nil, false
	}
	if !r.onBranch(e.EvidenceCommit) {
		c.bad("evidence_commit %s is not in the history of %s", e.EvidenceCommit[:12], r.Branch)
	}
	data, err := r.File(commit, e.ResultsPath)
	if err != nil {
		c.bad("results_path at the evidence commit: %v", err)
		return nil, false
	}
	if sum := sha256Hex(data); sum != e.ResultsSHA256 {
		c.bad("results.json at the evidence commit hashes to %s, not the approved %s", sum, e.ResultsSHA256)
	}
	// The evidence commit introduced this version of the report.
	if commit.NumParents() > 0 {
		if parent, err := commit.Parent(0); err == nil && blobHash(parent, e.ResultsPath) == blobHash(commit, e.ResultsPath) {
			c.bad("evidence_commit %s did not introduce the report (its parent already has the same results.json)", e.EvidenceCommit[:12])
		}
	}
	return commit, true
}

// validateFolder extracts the report folder dir at the evidence commit
// into c.Files and validates it strictly (the validator checks every
// referenced artifact's hash), then checks that the report is the entry's.
// It returns the folder's files, or false when the folder or its
// protocol's bundle cannot be read.
func (r *Repo) validateFolder(c *Checked, commit *object.Commit, dir string, o Options) (map[string][]byte, bool) {
	files, links, err := r.folderFiles(commit, dir)
	if err != nil {
		c.bad("report folder at the evidence commit: %v", err)
		return nil, false
	}
	c.Files = files
	bundle, err := r.bundleFor(commit, c.Entry.ProtocolID, o)
	if err != nil {
		c.bad("%v", err)
		return nil, false
	}
	// The folder is validated from the git objects in memory; a symlink
	// stays a symlink, which the validator refuses.
	v := validate.FS(memFS(files, links), bundle)
	for _, x := range v.Violations {
		c.bad("invalid report: %s", x)
	}
	if v.Results != nil {
		c.Results = v.Results
		c.checkResults(v.Results)
	}
	return files, true
}

// checkResults checks that the validated report is the entry's run and
// protocol, and that it may be listed at all.
func (c *Checked) checkResults(res *contract.Results) {
	e := c.Entry
	if res.Run.ID != e.RunID {
		c.bad("run_id %q does not match the report's run.id %q", e.RunID, res.Run.ID)
	}
	if res.Protocol.ID != e.ProtocolID {
		c.bad("protocol_id %q does not match the report's %q", e.ProtocolID, res.Protocol.ID)
	}
	// A partial conforming run may be reviewed and listed (with its
	// label); a nonconforming one stays outside the standard manifest.
	if res.Run.Status == contract.StatusNonconforming {
		c.bad("the run is nonconforming: it stays outside the standard manifest")
	}
}

// memFS is a folder read from git objects as a file system, the symbolic
// links in links marked as such.
func memFS(files map[string][]byte, links map[string]bool) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, b := range files {
		mode := fs.FileMode(0o644)
		if links[name] {
			mode |= fs.ModeSymlink
		}
		fsys[name] = &fstest.MapFile{Data: b, Mode: mode}
	}
	return fsys
}

// folder returns the files under dir at a commit, by path relative to dir.
func (r *Repo) folder(c *object.Commit, dir string) (map[string][]byte, error) {
	files, _, err := r.folderFiles(c, dir)
	return files, err
}

// bundleFor is the bundle an entry of that protocol is validated with: the
// embedded one, or the one the repository holds at the evidence commit
// (bench/prompts/standard-v1 of a Strata checkout), verified for the
// protocol. An unknown protocol gets the embedded bundle, and the
// validator names the protocol as unknown.
func (r *Repo) bundleFor(c *object.Commit, id string, o Options) (*fixtures.Bundle, error) {
	table := o.Protocols
	if table == nil {
		table = protocol.Known()
	}
	def, ok := table.Lookup(id)
	if !ok || def.Bundle == protocol.BundleEmbedded {
		return o.Embedded, nil
	}
	dir := path.Join("bench", "prompts", protocol.BundleName)
	files, links, err := r.folderFiles(c, dir)
	if err != nil {
		return nil, fmt.Errorf("the bundle of %s at the evidence commit (%s): %w", id, dir, err)
	}
	for name := range files {
		if links[name] {
			return nil, fmt.Errorf("the bundle of %s at the evidence commit: %s is a symbolic link", id, name)
		}
	}
	return fixtures.Load(memFS(files, links), dir+" at "+c.Hash.String()[:12], def)
}

// folderFiles returns the files under dir at a commit, by path relative to
// dir, and which of them are symbolic links.
func (r *Repo) folderFiles(c *object.Commit, dir string) (map[string][]byte, map[string]bool, error) {
	t, err := c.Tree()
	if err != nil {
		return nil, nil, err
	}
	sub, err := t.Tree(dir)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return nil, nil, fmt.Errorf("%s: %w", dir, ErrNoFile)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	out, links := map[string][]byte{}, map[string]bool{}
	err = sub.Files().ForEach(func(f *object.File) error {
		if f.Size > contract.MaxOutputsBytes {
			return fmt.Errorf("%s is larger than a result file can be", f.Name)
		}
		s, err := f.Contents()
		if err != nil {
			return err
		}
		out[f.Name] = []byte(s)
		links[f.Name] = f.Mode == filemode.Symlink
		return nil
	})
	return out, links, err
}

// Folders lists the result folders on the default branch with their
// files (for the website's non-approved pages).
func (r *Repo) Folders() (map[string]map[string][]byte, error) {
	t, err := r.head.Tree()
	if err != nil {
		return nil, err
	}
	sub, err := t.Tree(ResultsDir)
	if errors.Is(err, object.ErrDirectoryNotFound) {
		return map[string]map[string][]byte{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", ResultsDir, r.Head()[:12], err)
	}
	out := map[string]map[string][]byte{}
	for _, e := range sub.Entries {
		if e.Mode.IsFile() {
			continue
		}
		files, err := r.folder(r.head, ResultsDir+"/"+e.Name)
		if err != nil {
			return nil, err
		}
		out[e.Name] = files
	}
	return out, nil
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// AddOptions describe a maintainer's approval.
type AddOptions struct {
	Options
	ResultsPath string // bench/results/<folder>/results.json (or the folder)
	ReviewPR    string
	ReviewedBy  string
	// Replaces is the run ID whose current entry the new one replaces (""
	// for none): the old entry is kept, marked replaced_by.
	Replaces string
}

// Add verifies a report on the default branch and returns the manifest with
// a new entry for it. The evidence commit is the commit that introduced the
// report's current version. It refuses a draft (not activated) protocol, a
// partial or nonconforming run, anything that fails verification, and a run
// already in the manifest unless o.Replaces names it (or the run the new
// one replaces).
func (r *Repo) Add(m *Manifest, o AddOptions) (*Manifest, error) {
	p := strings.TrimSuffix(filepath.ToSlash(o.ResultsPath), "/")
	if !strings.HasSuffix(p, "/"+contract.ResultsFile) {
		p += "/" + contract.ResultsFile
	}
	if why := badReviewer(o.ReviewedBy); why != "" {
		return nil, errors.New("--reviewed-by " + why)
	}
	if why := badReviewPR(o.ReviewPR); why != "" {
		return nil, fmt.Errorf("--review-pr %q %s", o.ReviewPR, why)
	}
	intro, err := r.Introduced(p)
	if err != nil {
		return nil, err
	}
	data, err := r.File(r.head, p)
	if err != nil {
		return nil, err
	}
	var head struct {
		Run struct {
			ID string `json:"id"`
		} `json:"run"`
		Protocol struct {
			ID string `json:"id"`
		} `json:"protocol"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	e := Entry{
		RunID: head.Run.ID, ProtocolID: head.Protocol.ID, ResultsPath: p, ResultsSHA256: sha256Hex(data),
		EvidenceCommit: intro.Hash.String(), ReviewPR: o.ReviewPR, ReviewedBy: o.ReviewedBy,
		ReviewedAt: o.Now.UTC().Format(time.RFC3339), Verification: EvidenceReviewed, ReproductionRunIDs: []string{},
	}
	c := r.Check(e, o.Options)
	if c.OK() && c.Results != nil && c.Results.Run.Status == contract.StatusPartial {
		c.Problems = append(c.Problems, "the run is partial: this helper approves complete runs only (a partial run is reviewed by hand and never appears as a complete result)")
	}
	if !c.OK() {
		return nil, fmt.Errorf("%s cannot be approved:\n  %s", p, strings.Join(c.Problems, "\n  "))
	}
	out := &Manifest{Format: Format, SchemaVersion: SchemaVersion, Entries: []Entry{}}
	if m != nil {
		out.Entries = append(out.Entries, m.Entries...)
	}
	if o.Replaces != "" {
		if err := replace(out, o.Replaces, &e); err != nil {
			return nil, err
		}
	}
	for _, x := range out.Entries {
		if x.RunID == e.RunID && x.Current() {
			return nil, fmt.Errorf("run %s is already in the manifest (reviewed at %s); a new review of it is added with --replaces %s, which keeps the old entry marked replaced_by", e.RunID, x.ReviewedAt, e.RunID)
		}
	}
	out.Entries = append(out.Entries, e)
	return out, nil
}

// ReadWorktreeManifest reads bench/approved.json from the working tree (a
// missing file is an empty manifest).
func ReadWorktreeManifest(repoDir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(repoDir, filepath.FromSlash(Path)))
	if errors.Is(err, os.ErrNotExist) {
		return &Manifest{Format: Format, SchemaVersion: SchemaVersion, Entries: []Entry{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// WriteWorktreeManifest writes bench/approved.json atomically.
func WriteWorktreeManifest(repoDir string, m *Manifest) error {
	data, err := m.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(repoDir, filepath.FromSlash(Path)), data, 0o644)
}
