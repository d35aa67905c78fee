// Package provenance gathers every identity fact of a result before the run
// starts: the install's commit and build kind, the machine (through
// internal/probe), and the model files with their SHA-256 (through
// internal/modelfiles) and GGUF metadata. Each fact has a source or is null
// with a reason; hashing time is reported on its own, outside the run's
// duration.
package provenance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/gguf"
	"github.com/strata-bench/strata/internal/install"
	"github.com/strata-bench/strata/internal/modelfiles"
	"github.com/strata-bench/strata/internal/probe"
	"github.com/strata-bench/strata/internal/record"
)

// Inputs say where to look.
type Inputs struct {
	// Install is where the running strata came from (install.Detect, which
	// the run calls first, to say it before anything is sent).
	Install install.Info
	Runner  probe.Runner
	Root    fs.FS
	GOOS    string
	// ModelPath is the model file the server names and EngineArgs the
	// engine's arguments (nil: unknown), both relative to EngineDir, the
	// engine's working folder; ModelPathFrom says where the server named
	// it (dialect.Dialect.ModelPathSource) and ModelPathNote how a
	// relative model_path was resolved. ModelGlobs are the profile's
	// model_files, relative to ModelDir.
	ModelPath     string
	ModelPathFrom string
	ModelPathNote string
	EngineArgs    []string
	EngineDir     string
	ModelGlobs    []string
	ModelDir      string
	// ModelNamed are the model files the engine's own config file names,
	// relative to ModelNamedDir, found in ModelNamedFrom.
	ModelNamed     []string
	ModelNamedDir  string
	ModelNamedFrom string
	// Engine is what the runner could see of the engine process (its
	// device selections are tied to the probed GPUs).
	Engine   record.EngineView
	Cache    *modelfiles.Cache
	Rehash   bool
	Progress func(done, total int64)
}

// refusal says in a few words why a named file is not a model file.
func refusal(err error) string {
	if errors.Is(err, os.ErrNotExist) {
		return "no such file, and not named like a GGUF model file"
	}
	return err.Error()
}

// Gather collects every identity fact of a result before the run: the
// install's commit, the machine, the model files and their hashes, and the
// GGUF metadata of the first one; each unknown value carries its reason.
func Gather(ctx context.Context, in Inputs) record.Facts {
	f := record.Facts{Missing: map[string]string{}}
	installFacts(&f, in.Install)
	pf := probe.Probe(ctx, in.Runner, in.Root, in.GOOS)
	f.Hardware, f.OS, f.Drivers, f.Runtime = pf.Hardware, pf.OS, pf.Drivers, pf.Runtime
	for k, v := range pf.Missing {
		f.Missing[k] = v
	}
	f.Extensions.MachineSources = pf.Sources
	var why string
	if f.Extensions.SelectedDevices, why = SelectedDevices(in.Engine, pf.Hardware.GPUs); why != "" {
		f.Missing[contract.PtrSelectedDeviceIndices] = why
	}
	modelFacts(ctx, &f, in)
	return f
}

// installFacts are the install's commit and build kind, and where they
// came from (or, when there is no commit, the install's own reason).
func installFacts(f *record.Facts, inst install.Info) {
	f.BuildKind = &inst.Kind
	if inst.Commit != "" {
		c := inst.Commit
		f.StrataCommit, f.RunnerCommit = &c, &c
	} else {
		for _, p := range []string{contract.PtrSoftwareStrataCommit, contract.PtrSoftwareRunnerCommit, contract.PtrProtocolGitCommit} {
			f.Missing[p] = inst.Reason
		}
	}
	ext := &contract.Install{BuildKind: inst.Kind, ModuleVersion: inst.ModuleVersion}
	if inst.Source != "" {
		ext.CommitFrom, ext.CommitSource = inst.From, inst.Source
	} else {
		ext.NoCommit = inst.Reason
	}
	f.Extensions.Install = ext
}

// modelFacts are the model files: found, refused when they are not model
// files, hashed, and the GGUF metadata of the first readable one (hints
// with their sources, never the operator-declared fields).
func modelFacts(ctx context.Context, f *record.Facts, in Inputs) {
	cands, problems := modelfiles.Find(modelfiles.Sources{ModelPath: in.ModelPath, ModelPathFrom: in.ModelPathFrom, EngineArgs: in.EngineArgs, EngineDir: in.EngineDir,
		Globs: in.ModelGlobs, GlobDir: in.ModelDir, Named: in.ModelNamed, NamedDir: in.ModelNamedDir, NamedFrom: in.ModelNamedFrom})
	if len(cands) == 0 {
		reason := "no model file was found: the server named no model_path and the profile names none"
		if len(problems) > 0 {
			reason += " (" + problems[0] + ")"
		}
		f.Missing[contract.PtrModelFiles] = reason
		f.Extensions.ModelHashing = &contract.ModelHashing{Files: []contract.HashedFile{}, Problems: problems}
		return
	}
	hashed, took := modelfiles.Hash(ctx, cands, modelfiles.Options{Cache: in.Cache, Rehash: in.Rehash, Progress: in.Progress})
	detail := []contract.HashedFile{}
	f.ModelFiles = []contract.ModelFile{}
	for _, h := range hashed {
		// Only model files are recorded: a file the server names that is
		// not GGUF (or, unreadable, is not even named like one) is refused
		// with the reason, never hashed, cached or published.
		if errors.Is(h.Err, modelfiles.ErrNotModel) || h.Err != nil && !gguf.Named(h.Name) {
			problems = append(problems, "refused "+h.From+": "+refusal(h.Err))
			continue
		}
		mf, d := hashedFile(f, h, len(f.ModelFiles))
		f.ModelFiles = append(f.ModelFiles, mf)
		detail = append(detail, d)
	}
	if len(f.ModelFiles) == 0 {
		f.ModelFiles = nil
		f.Missing[contract.PtrModelFiles] = "no model file was found to hash: " + strings.Join(problems, "; ")
	}
	secs := took.Seconds()
	note := "hashing runs before the warm-up and is not part of required_duration_s"
	if c := CacheNote(detail); c != "" {
		note += "; " + c
	}
	f.Extensions.ModelHashing = &contract.ModelHashing{DurationS: &secs, Files: detail, Problems: nonNil(problems),
		Note: note, ModelPathResolved: in.ModelPathNote}
	if f.ModelFiles == nil {
		return
	}
	for _, h := range hashed {
		if h.Err != nil || h.SHA256 == "" {
			continue
		}
		if g, err := gguf.OpenWithoutLists(h.Path); err == nil {
			f.Extensions.GGUF = &contract.GGUF{File: h.Name, Metadata: facts(g.Summary())}
		} else {
			f.Extensions.GGUF = &contract.GGUF{File: h.Name, Error: "not readable as GGUF"}
		}
		break
	}
}

// CacheNote says how many of the model files' hashes were reused from the
// hash cache rather than read, and how to read them again ("" none): a
// cached hash stands for bytes nobody read in this run.
func CacheNote(files []contract.HashedFile) string {
	n := 0
	for _, f := range files {
		if f.FromCache {
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d model file hashes were reused from the hash cache (each file unchanged in path, size, mtime, change time, device and inode since it was hashed at its computed_at); --rehash hashes them again",
		n, len(files))
}

// hashedFile is one model file as the result and its hashing record keep
// it (model.files[i], with the reason when it could not be read).
func hashedFile(f *record.Facts, h modelfiles.Hashed, i int) (contract.ModelFile, contract.HashedFile) {
	mf := contract.ModelFile{Path: h.Name}
	d := contract.HashedFile{Path: h.Name, FoundIn: h.From, SizeBytes: h.Size, FromCache: h.FromCache}
	if h.Err != nil {
		reason := "cannot be read: " + h.Err.Error()
		if errors.Is(h.Err, os.ErrNotExist) {
			reason = "no such file on this machine (" + h.From + ")"
		}
		f.Missing[contract.Pointer("model", "files", i, "sha256")] = reason
		d.Error = reason
	} else {
		sum := h.SHA256
		mf.SHA256 = &sum
		d.ComputedAt = h.ComputedAt.UTC().Format(time.RFC3339)
	}
	return mf, d
}

// facts are GGUF metadata facts as the result keeps them.
func facts(m map[string]gguf.Fact) map[string]contract.GGUFFact {
	out := make(map[string]contract.GGUFFact, len(m))
	for k, v := range m {
		out[k] = contract.GGUFFact{Value: v.Value, Source: v.Source}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
