package benchrun

import (
	"github.com/strata-bench/strata/internal/engine"
	"github.com/strata-bench/strata/internal/exitcode"
	"github.com/strata-bench/strata/internal/protocol"
	"github.com/strata-bench/strata/internal/record"
)

// Declared is the identity given on the command line: a nil field was not
// given, and the profile's [identity] value (if any) stands.
type Declared struct {
	Track, TrackNotes                                *string
	ModelRevision, SourceRevision, TokenizerRevision *string
	Quantization, CustomPack                         *string
	Background, BuildOptions                         []string // nil: not given
}

// merge is the declared identity: the command line wins over the profile,
// and the track defaults to custom.
func (d Declared) merge(p *engine.Profile) (record.Identity, error) {
	for _, f := range []struct {
		flag string
		vals []string
	}{{"model-revision", engine.Values(d.ModelRevision)}, {"source-revision", engine.Values(d.SourceRevision)},
		{"tokenizer-revision", engine.Values(d.TokenizerRevision)}, {"quantization", engine.Values(d.Quantization)},
		{"background", d.Background}, {"build-options", d.BuildOptions}} {
		for _, v := range f.vals {
			if why := engine.OneLine(v); why != "" {
				return record.Identity{}, exitcode.Usagef("--%s %q %s", f.flag, v, why)
			}
		}
	}
	var pi engine.Identity
	if p != nil {
		pi = p.Identity
	}
	pick := func(flag, prof *string) *string {
		if flag != nil {
			if *flag == "" {
				return nil
			}
			return flag
		}
		return prof
	}
	id := record.Identity{
		Track: protocol.TrackCustom, TrackNotes: pick(d.TrackNotes, pi.TrackNotes),
		ModelRevision: pick(d.ModelRevision, pi.ModelRevision), SourceRevision: pick(d.SourceRevision, pi.SourceRevision),
		TokenizerRevision: pick(d.TokenizerRevision, pi.TokenizerRevision), Quantization: pick(d.Quantization, pi.Quantization),
		CustomPack: pick(d.CustomPack, pi.CustomPack), Background: d.Background, BuildOptions: d.BuildOptions,
	}
	switch {
	case d.Track != nil:
		id.Track = *d.Track
	case pi.Track != nil:
		id.Track = *pi.Track
	}
	if ok, why := protocol.ValidTrack(id.Track); !ok {
		return id, exitcode.Usagef("--track %q: %s", id.Track, why)
	}
	if d.Background == nil && pi.Background != nil {
		id.Background = pi.Background
	}
	if d.BuildOptions == nil && pi.BuildOptions != nil {
		id.BuildOptions = pi.BuildOptions
	}
	return id, nil
}
