package contract

import "bytes"

// The engine log (EngineLog, kind ArtifactEngineLog) is the engine's own
// output, redacted: what the engine the runner started printed, or the log
// file an engine already serving writes (bench run --engine-log). strata's
// own notes in it are lines of their own in square brackets.
const (
	// MaxEngineLogBytes is how much of an engine's output strata keeps (the
	// head, where the engine prints its configuration), and of the log file
	// both what was in it before the run and what the run added: with
	// strata's notes, the artifact stays within MaxArtifactBytes.
	MaxEngineLogBytes = 32 << 20
	// EngineLogRunStart is the line strata puts where the run began in a
	// log file the engine was already writing: the lines above it were
	// there before, and only those below it are held against the run's
	// records.
	EngineLogRunStart = "[strata: the run began here; the lines above were in the engine's log file before it]"
	// EngineLogCut is the line that ends a log strata cut at
	// MaxEngineLogBytes: what the engine wrote after it is not kept.
	EngineLogCut = "[strata: the engine log was cut at 32 MiB]"
)

// EngineLogOfRun is the part of an engine log the engine wrote while the
// run went: below EngineLogRunStart, or all of it where there is no such
// line (the runner started the engine). from is the 1-based line of the
// log its first line is, and whole is false when the log was cut, so
// lines of the run may be missing from it.
func EngineLogOfRun(log []byte) (run []byte, from int, whole bool) {
	run, from = log, 1
	mark := []byte(EngineLogRunStart + "\n")
	if i := bytes.Index(log, mark); i >= 0 && (i == 0 || log[i-1] == '\n') {
		run = log[i+len(mark):]
		from = bytes.Count(log[:i], []byte("\n")) + 2
	}
	return run, from, !bytes.Contains(run, []byte("\n"+EngineLogCut+"\n"))
}
