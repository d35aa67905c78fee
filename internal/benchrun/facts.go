package benchrun

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/dialect"
	"github.com/strata-bench/strata/internal/engine"
	"github.com/strata-bench/strata/internal/engineconfig"
	"github.com/strata-bench/strata/internal/humanize"
	"github.com/strata-bench/strata/internal/inputfile"
	"github.com/strata-bench/strata/internal/install"
	"github.com/strata-bench/strata/internal/localproc"
	"github.com/strata-bench/strata/internal/modelfiles"
	"github.com/strata-bench/strata/internal/provenance"
	"github.com/strata-bench/strata/internal/record"
)

// prehash hashes the model files a profile names (its engine's arguments
// and model_files) while the engine the runner started loads them. The
// hashes land in the hash cache, where gathering the facts afterwards finds
// them; the files the server names only once it is up are hashed then.
type prehash struct {
	p      session
	prof   *engine.Profile
	rehash bool
	cache  *modelfiles.Cache
	// Set once started: done closes when hashing ends.
	done    chan struct{}
	files   int
	bytes   int64
	took    time.Duration
	loadDur time.Duration
	// doneBytes and totalBytes are the hashing's progress, for the status
	// line while the engine loads.
	doneBytes, totalBytes atomic.Int64
}

// progress is how many bytes are hashed of how many.
func (h *prehash) progress() (done, total int64) {
	if h == nil {
		return 0, 0
	}
	return h.doneBytes.Load(), h.totalBytes.Load()
}

// newPrehash opens the hash cache (shared by the prehash and the facts).
func newPrehash(p session, prof *engine.Profile, rehash bool) *prehash {
	h := &prehash{p: p, prof: prof, rehash: rehash}
	if p.CacheDir != "" {
		c, err := modelfiles.OpenCache(filepath.Join(p.CacheDir, "model-hashes.json"))
		if err != nil {
			p.out.Line("warning: %v (hashing without a cache)", err)
		} else {
			h.cache = c
		}
	}
	return h
}

// candidates are the model files the profile names before its engine runs.
func (h *prehash) candidates() []modelfiles.Candidate {
	if h.prof == nil || len(h.prof.Command) == 0 {
		return nil
	}
	src := modelfiles.Sources{EngineArgs: h.prof.Command[1:], EngineDir: h.prof.Workdir, Globs: h.prof.ModelFiles}
	if h.prof.Path != "built-in" {
		src.GlobDir = filepath.Dir(h.prof.Path)
	}
	cands, _ := modelfiles.Find(src)
	return cands
}

// start begins hashing (once the engine's process runs).
func (h *prehash) start(ctx context.Context) {
	if h == nil || h.done != nil || h.cache == nil {
		return
	}
	cands := h.candidates()
	if len(cands) == 0 {
		return
	}
	h.done = make(chan struct{})
	go func() {
		defer close(h.done)
		hashed, took := modelfiles.Hash(ctx, cands, modelfiles.Options{Cache: h.cache, Rehash: h.rehash, Progress: func(done, total int64) {
			h.doneBytes.Store(done)
			h.totalBytes.Store(total)
		}})
		h.took = took
		for _, x := range hashed {
			if x.Err == nil && !x.FromCache {
				h.files++
				h.bytes += x.Size
			}
		}
	}()
}

// loaded records how long the engine took to load.
func (h *prehash) loaded(d time.Duration) {
	if h != nil {
		h.loadDur = d
	}
}

// wait waits for the hashing to end; it reports whether any ran.
func (h *prehash) wait() bool {
	if h == nil || h.done == nil {
		return false
	}
	<-h.done
	return true
}

// gatherFacts probes the machine and hashes the model files, with progress.
// Relative model paths resolve against the engine's own working folder: the
// profile's workdir for an engine the runner started, the local process's
// for one it found listening on the port.
func gatherFacts(ctx context.Context, p session, t *target, srv record.Server, view record.EngineView, lp *localproc.Process, h *prehash,
	inst install.Info) record.Facts {
	in := provenance.Inputs{Install: inst, Runner: p.Probe,
		Root: p.Root, GOOS: runtime.GOOS, ModelDir: p.Dir, EngineDir: p.Dir, Rehash: h.rehash, Cache: h.cache,
		ModelPath: srv.ModelPath, ModelPathFrom: dialect.Of(srv.Dialect).ModelPathSource(), EngineArgs: view.Args, Engine: view}
	relative := srv.ModelPath != "" && !filepath.IsAbs(srv.ModelPath)
	switch {
	case t.prof != nil:
		in.ModelGlobs = t.prof.ModelFiles
		if len(t.prof.Command) > 0 {
			in.EngineArgs = t.prof.Command[1:]
		}
		if t.prof.Path != "built-in" {
			in.ModelDir = filepath.Dir(t.prof.Path)
		}
		in.EngineDir = t.prof.Workdir
		if relative {
			in.ModelPathNote = "the server's model_path is relative; it was resolved against the profile's engine working folder"
		}
	case lp != nil:
		in.EngineDir = lp.Cwd
		if relative {
			in.ModelPathNote = fmt.Sprintf("the server's model_path is relative; it was resolved against the working folder of process %d, found by its listening port (/proc)", lp.PID)
		}
	case relative:
		in.ModelPathNote = "the server's model_path is relative and the server's working folder is unknown (no local process listens on its port), so it was resolved against strata's working folder"
	}
	if srv.ModelPathNote != "" {
		in.ModelPathNote = srv.ModelPathNote
	}
	// Strata's server names its model files and engine flags in its
	// config file, not on its command line.
	var strataFile *record.StrataFile
	var strataErr error
	if dialect.Of(srv.Dialect).ConfigFrom() == dialect.ConfigStrataFile {
		var dir string
		if strataFile, dir, strataErr = readStrataFile(view, in.EngineDir); strataErr == nil {
			// /props model_path is the --native value as written, relative
			// to the engine's cwd, which the file names: the file's own
			// names are hashed instead.
			in.ModelPath, in.ModelPathNote = "", ""
			in.ModelNamed, in.ModelNamedDir = engineconfig.StrataModelFiles(strataFile.Args), dir
			in.ModelNamedFrom = "Strata's config file " + strataFile.Name
		}
	}
	overlapped := h.wait()
	if overlapped && h.files > 0 {
		p.out.Line("hashed %s of model files in %s while the engine loaded (%s)",
			humanize.Bytes(h.bytes), humanize.Seconds(h.took.Seconds()), humanize.Seconds(h.loadDur.Seconds()))
	}
	start := p.Clock()
	in.Progress = func(done, total int64) {
		el := p.Clock().Sub(start).Seconds()
		rate := float64(done) / max(el, 1e-9)
		switch {
		case p.scr != nil && p.scr.Live() && done < total:
			eta := "time left: measuring"
			if rate > 0 && el > 0.5 {
				eta = "~" + clockText(float64(total-done)/rate) + " left"
			}
			p.scr.Status(fmt.Sprintf("hashing model files: %s of %s · %s/s · %s", humanize.Bytes(done), humanize.Bytes(total), humanize.Bytes(int64(rate)), eta))
		case done == total:
			p.clearStatus()
			p.out.Line("hashed %s of model files in %s (%s/s)", humanize.Bytes(total), humanize.Seconds(el), humanize.Bytes(int64(rate)))
		}
	}
	f := provenance.Gather(ctx, in)
	f.StrataFile = strataFile
	if strataErr != nil {
		f.StrataFileErr = strataErr.Error()
	}
	h.finish(p, f.Extensions.ModelHashing, overlapped)
	return f
}

// finish adds the hashing done while the engine loaded to the model
// hashing facts, says which hashes came from the cache, and saves it.
func (h *prehash) finish(p session, mh *contract.ModelHashing, overlapped bool) {
	if mh != nil && overlapped {
		total := h.took.Seconds()
		if mh.DurationS != nil {
			total += *mh.DurationS
		}
		mh.DurationS = &total
		mh.WhileEngineLoaded = &contract.HashedOverlaid{HashingS: h.took.Seconds(), EngineLoadS: h.loadDur.Seconds(), FilesHashed: h.files,
			Note: "the files the profile names were hashed while the engine loaded them; only hashing beyond the load adds to the wait"}
	}
	if mh != nil {
		if c := provenance.CacheNote(mh.Files); c != "" {
			p.out.Line("%s", c)
		}
	}
	if h.cache != nil {
		if err := h.cache.Save(); err != nil {
			p.out.Line("warning: the hash cache was not saved: %v", err)
		}
	}
}

// readStrataFile reads the config file a Strata server's command line
// names (--config, relative to the server's working folder dir) and
// returns it with the folder its engine's relative paths resolve against
// (the file's cwd, itself relative to dir).
func readStrataFile(view record.EngineView, dir string) (*record.StrataFile, string, error) {
	if view.Args == nil {
		return nil, "", fmt.Errorf("the runner could not see the server's command line (it neither started the server nor found it listening on a local port), so the config file that holds the engine's flags is unknown")
	}
	name := dialect.ConfigFileOf(view.Args)
	if name == "" {
		return nil, "", fmt.Errorf("the server's command line (%s) names no %s file", view.Where, dialect.StrataConfigFlag)
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	data, err := inputfile.Read(path, 4<<20)
	if err != nil {
		return nil, "", fmt.Errorf("the config file %s the server's command line names cannot be read: %w", filepath.Base(name), err)
	}
	file, err := dialect.ParseStrataFile(filepath.Base(name), data)
	if err != nil {
		return nil, "", err
	}
	cwd := file.Cwd
	switch {
	case cwd == "":
		cwd = dir
	case !filepath.IsAbs(cwd):
		cwd = filepath.Join(dir, cwd)
	}
	return file, cwd, nil
}
