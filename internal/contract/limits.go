package contract

// Limits on the files of a result folder, checked before a byte is read:
// strata never reads a submitted file of unbounded size.
const (
	MaxResultsBytes  = 32 << 20
	MaxOutputsBytes  = 512 << 20
	MaxArtifactBytes = 64 << 20
	MaxReadmeBytes   = 4 << 20
)
