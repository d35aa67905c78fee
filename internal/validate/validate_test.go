package validate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/strata-bench/strata/bench/prompts"
	"github.com/strata-bench/strata/internal/contract"
	"github.com/strata-bench/strata/internal/fixtures"
)

// folder is a committed result folder in memory.
func folder(t testing.TB, name string) fstest.MapFS {
	t.Helper()
	dir := filepath.Join("..", "..", "testdata", "results", name)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fsys[e.Name()] = &fstest.MapFile{Data: data, Mode: 0o644}
	}
	return fsys
}

func bundle(t testing.TB) *fixtures.Bundle {
	t.Helper()
	b, err := prompts.Bundle()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rehash recomputes every listed artifact's hash, as an attacker who edits
// evidence would.
func rehash(t testing.TB, fsys fstest.MapFS) {
	t.Helper()
	res := fsys[contract.ResultsFile].Data
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(res, &doc); err != nil {
		return // a mutation of results.json itself that is not JSON
	}
	var arts []map[string]string
	if err := json.Unmarshal(doc["artifacts"], &arts); err != nil {
		return // a mutation of the artifacts' list that is not a list
	}
	for _, a := range arts {
		f, ok := fsys[a["path"]]
		if !ok {
			continue
		}
		s := sha256.Sum256(f.Data)
		old := []byte(`"` + a["sha256"] + `"`)
		res = bytes.Replace(res, old, []byte(`"`+hex.EncodeToString(s[:])+`"`), 1)
	}
	fsys[contract.ResultsFile].Data = res
}

func replaceIn(fsys fstest.MapFS, file, old, new string, n int) {
	fsys[file].Data = []byte(strings.Replace(string(fsys[file].Data), old, new, n))
}

func TestCommittedFoldersValidate(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	for _, name := range []string{"baseline", "candidate", "partial", "nonconforming"} {
		v := FS(folder(t, name), b)
		for _, x := range v.Violations {
			t.Errorf("%s: %s", name, x)
		}
	}
}

// TestValidatorHoldsTheEvidenceToTheWorkload: each attack of the security
// review on a valid folder, with the hashes recomputed, is caught at the
// place it was made, in plain words.
func TestValidatorHoldsTheEvidenceToTheWorkload(t *testing.T) {
	t.Parallel()
	b := bundle(t)
	for _, c := range []struct {
		name   string
		mutate func(fstest.MapFS)
		ptr    string // the violation's pointer (a prefix)
		says   string // a part of its message
	}{
		{"greedy sampling in the configuration", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"temperature": 1,`, `"temperature": 0.0,`, 1)
		}, "/configuration/sampling", "the profile requires"},
		{"greedy sampling in every request body", func(f fstest.MapFS) {
			replaceIn(f, contract.OutputsFile, `"temperature":1.0`, `"temperature":0`, -1)
		}, "/requests/", "is not the fixture with the profile's settings"},
		{"a sanity prompt replaced", func(f fstest.MapFS) {
			replaceIn(f, contract.OutputsFile, `[case sanity-R1]\n`, `[case sanity-R1]\nReply with ORBIT-731 only. `, 1)
		}, "/requests/14", "is not the fixture"},
		{"thinking switched off in the bodies", func(f fstest.MapFS) {
			replaceIn(f, contract.OutputsFile, `"reasoning_budget_tokens":2147483647`, `"reasoning_budget_tokens":0`, -1)
		}, "/requests/", "is not the fixture"},
		{"completion tokens raised in outputs.jsonl", func(f fstest.MapFS) {
			re := regexp.MustCompile(`"usage":\{"completion_tokens":(\d+)`)
			f[contract.OutputsFile].Data = re.ReplaceAll(f[contract.OutputsFile].Data, []byte(`"usage":{"completion_tokens":9${1}`))
		}, "/requests/", "the raw usage and timings in outputs.jsonl give"},
		// The engine number rules are re-derived from the raw evidence: a
		// record that kept what the rules make null does not stand.
		{"a count sent as a JSON string in outputs.jsonl", func(f fstest.MapFS) {
			re := regexp.MustCompile(`"usage":\{"completion_tokens":(\d+)`)
			f[contract.OutputsFile].Data = re.ReplaceAll(f[contract.OutputsFile].Data, []byte(`"usage":{"completion_tokens":"${1}"`))
		}, "/requests/", "outputs.jsonl give null"},
		{"more cached tokens than the prompt in outputs.jsonl", func(f fstest.MapFS) {
			replaceIn(f, contract.OutputsFile, `"prompt_tokens_details":{"cached_tokens":0}`, `"prompt_tokens_details":{"cached_tokens":1000}`, 1)
		}, "/requests/", "outputs.jsonl give null"},
		{"a decode rate that implies more tokens than were returned", func(f fstest.MapFS) {
			re := regexp.MustCompile(`"predicted_per_second":[0-9.]+`)
			f[contract.OutputsFile].Data = re.ReplaceAll(f[contract.OutputsFile].Data, []byte(`"predicted_per_second":1e9`))
		}, "/requests/", "outputs.jsonl give null"},
		{"a verdict reason rewritten", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"reason": "the answer is exactly the required JSON value"`, `"reason": "reviewed by hand"`, 1)
		}, "/requests/", "re-scoring the saved output says"},
		{"a duplicate key in results.json", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"status": "complete",`, `"status": "complete", "status": "partial",`, 1)
		}, contract.ResultsFile, "a duplicate object name"},
		{"invalid UTF-8 in results.json", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"track": "custom"`, "\"track\": \"cust\xffom\"", 1)
		}, contract.ResultsFile, "invalid UTF-8"},
		{"a duplicate key in outputs.jsonl", func(f fstest.MapFS) {
			replaceIn(f, contract.OutputsFile, `{"request_id":"warmup",`, `{"request_id":"warmup","request_id":"sanity-I1",`, 1)
		}, contract.OutputsFile + ":1", "a duplicate object name"},
		{"an artifact that is a symlink out of the folder", func(f fstest.MapFS) {
			f["chat_template.jinja"] = &fstest.MapFile{Data: []byte("/etc/passwd"), Mode: fs.ModeSymlink}
		}, "/artifacts/3", "symbolic link"},
		{"an artifact path with ./", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"path": "config.json"`, `"path": "./config.json"`, 1)
		}, "/artifacts/0/path", "is not canonical"},
		{"a traversal path", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"path": "config.json"`, `"path": "../../config.json"`, 1)
		}, "/artifacts/0/path", "is not a file path inside the folder"},
		{"an artifact listed twice", func(f fstest.MapFS) {
			replaceIn(f, contract.ResultsFile, `"artifacts": [`, `"artifacts": [{"kind": "provenance", "path": "chat_template.jinja", "sha256": "`+strings.Repeat("0", 64)+`"},`, 1)
		}, "/artifacts/", "is listed twice"},
		{"a second results file", func(f fstest.MapFS) {
			f["results (1).json"] = &fstest.MapFile{Data: f[contract.ResultsFile].Data, Mode: 0o644}
		}, "results (1).json", "no artifact lists it"},
		{"a dispatch time that is not UTC", func(f fstest.MapFS) {
			re := regexp.MustCompile(`"dispatched_at":"([0-9T:.-]+)Z"`)
			f[contract.OutputsFile].Data = re.ReplaceAll(f[contract.OutputsFile].Data, []byte(`"dispatched_at":"${1}+02:00"`))
		}, "/requests/", "is not a UTC timestamp"},
		{"a dispatch before the run started", func(f fstest.MapFS) {
			re := regexp.MustCompile(`"dispatched_at":"20`)
			f[contract.OutputsFile].Data = re.ReplaceAll(f[contract.OutputsFile].Data, []byte(`"dispatched_at":"19`))
		}, "/requests/", "before the run started"},
		{"a bidirectional override in the run ID", func(f fstest.MapFS) {
			var r struct {
				Run struct {
					ID string `json:"id"`
				} `json:"run"`
			}
			// A run ID that cannot be read leaves the folder as it was, and
			// the violation wanted is then missing.
			_ = json.Unmarshal(f[contract.ResultsFile].Data, &r)
			replaceIn(f, contract.ResultsFile, `"id": "`+r.Run.ID+`"`, `"id": "`+r.Run.ID+"\u202e"+`"`, 1)
		}, "/run/id", "is not a run ID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fsys := folder(t, "baseline")
			c.mutate(fsys)
			mustCatch(t, fsys, b, c.ptr, c.says)
		})
	}
}

// mustCatch validates an edited folder, its hashes recomputed as an
// attacker would, and wants a violation at ptr (a prefix) saying says.
func mustCatch(t *testing.T, fsys fstest.MapFS, b *fixtures.Bundle, ptr, says string) {
	t.Helper()
	rehash(t, fsys)
	v := FS(fsys, b)
	for _, x := range v.Violations {
		if strings.HasPrefix(x.Pointer, ptr) && strings.Contains(x.Message, says) {
			return
		}
	}
	t.Errorf("not caught at %s (%q); violations:\n%v", ptr, says, v.Violations)
}

// BenchmarkValidateFS is the validator on a complete 34-request folder in
// memory (the fuzz target's cost per input).
func BenchmarkFS(b *testing.B) {
	bd := bundle(b)
	fsys := folder(b, "baseline")
	for b.Loop() {
		if v := FS(fsys, bd); len(v.Violations) != 0 {
			b.Fatal(v.Violations)
		}
	}
}

// FuzzValidate feeds the validator arbitrary results.json bytes beside the
// small committed folder's other files: it must never panic, and a folder it
// accepts must have decoded.
func FuzzValidate(f *testing.F) {
	b := bundle(f)
	base := folder(f, "aborted")
	f.Add(base[contract.ResultsFile].Data)
	f.Add([]byte(`{"format":"strata-standard-benchmark","schema_version":1,"protocol":{"id":"strata-qwen38-thinking-v1-draft.1"}}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Fuzz(func(t *testing.T, results []byte) {
		fsys := fstest.MapFS{}
		for name, file := range base {
			fsys[name] = file
		}
		fsys[contract.ResultsFile] = &fstest.MapFile{Data: results, Mode: 0o644}
		v := FS(fsys, b)
		if len(v.Violations) == 0 && v.Results == nil {
			t.Fatal("accepted without a result")
		}
	})
}

// FuzzValidateOutputs feeds the checks that read outputs.jsonl (the strict
// line parser, the trace, the bodies, the accounting, the verdicts)
// arbitrary bytes against the small committed folder's results.json,
// decoded once so the fuzzer spends its time on the outputs.
func FuzzValidateOutputs(f *testing.F) {
	b := bundle(f)
	base := folder(f, "aborted")
	v := FS(base, b)
	if len(v.Violations) != 0 {
		f.Fatal(v.Violations)
	}
	f.Add(base[contract.OutputsFile].Data)
	f.Add([]byte("{\"request_id\":\"warmup\"}\n{\"request_id\":\"warmup\"}\n"))
	f.Fuzz(func(t *testing.T, outputs []byte) {
		fsys := fstest.MapFS{contract.OutputsFile: &fstest.MapFile{Data: outputs, Mode: 0o644}}
		c := &checker{fsys: fsys, fx: b, res: v.Results}
		c.readOutputs()
		c.checkRequests()
		c.checkRounds()
		c.checkQuality()
	})
}

// TestEventsArePairs: a trace is an array of exact [seconds, kind] pairs,
// read token by token; null is a trace without events, and anything else
// (a triple, a pair the other way round, a string for the seconds, an
// object, a truncated array) is refused with the event's index.
func TestEventsArePairs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		events string
		want   string // the pairs seen, or "error" with the error's text
	}{
		{`[[0.1,"reasoning"],[0.25,"answer"],[1.5e0,"end"]]`, "0.1 reasoning;0.25 answer;1.5 end;"},
		{`[ [ 0 , "answer" ] ]`, "0 answer;"},
		{`[]`, ""},
		{`null`, ""},
		{``, "error absent"},
		{`[[0.1,"answer","extra"]]`, "error event 0"},
		{`[[0.1,"answer"],["answer",0.2]]`, "error event 1"},
		{`[["0.1","answer"]]`, "error event 0"},
		{`[[0.1]]`, "error event 0"},
		{`[{"t":0.1,"kind":"answer"}]`, "error event 0"},
		{`{"events":[]}`, "error not a list"},
		{`[[0.1,"answer"]`, "error"},
		{`[[1e999,"answer"]]`, "error event 0"},
	} {
		var got strings.Builder
		err := eachEvent([]byte(c.events), func(s float64, kind string) { fmt.Fprintf(&got, "%g %s;", s, kind) })
		if err != nil {
			if !strings.HasPrefix(c.want, "error") || !strings.Contains(err.Error(), strings.TrimSpace(strings.TrimPrefix(c.want, "error"))) {
				t.Errorf("%s: %v, want %s", c.events, err, c.want)
			}
			continue
		}
		if got.String() != c.want {
			t.Errorf("%s: %q, want %q", c.events, got.String(), c.want)
		}
	}
}

// unlistable is a folder whose subfolder dir cannot be listed (a
// permission or an I/O error).
type unlistable struct {
	fstest.MapFS
	dir string
}

func (u unlistable) ReadDir(name string) ([]fs.DirEntry, error) {
	if name == u.dir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrPermission}
	}
	return u.MapFS.ReadDir(name)
}

// TestAnUnlistableSubfolderIsAViolation: every file of the folder must be
// one an artifact lists, so a subfolder the validator cannot list (and
// whatever unlisted files it holds) fails the folder instead of passing
// unseen.
func TestAnUnlistableSubfolderIsAViolation(t *testing.T) {
	t.Parallel()
	fsys := folder(t, "baseline")
	fsys["extra/stray.html"] = &fstest.MapFile{Data: []byte("<p>not evidence</p>"), Mode: 0o644}
	v := FS(unlistable{MapFS: fsys, dir: "extra"}, bundle(t))
	for _, x := range v.Violations {
		if x.Pointer == "extra" && strings.Contains(x.Message, "cannot be listed") && strings.Contains(x.Message, fs.ErrPermission.Error()) {
			return
		}
	}
	t.Errorf("got violations %v, want one at extra saying it cannot be listed (%v)", v.Violations, fs.ErrPermission)
}
