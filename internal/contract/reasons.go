package contract

// ReasonKind is one rule that can make a run nonconforming or partial:
// the one list of them.
type ReasonKind string

// Nonconforming kinds.
const (
	RemoteServer     ReasonKind = "remote_server"
	SimulatedEngine  ReasonKind = "simulated_engine"
	RefusedRequest   ReasonKind = "refused_request"
	SettingOtherwise ReasonKind = "setting_resolved_otherwise"
	SettingNotTaken  ReasonKind = "setting_not_taken"
	CacheReuseKind   ReasonKind = "cache_reuse"
	LengthRule       ReasonKind = "length_rule"
	PreflightDiffers ReasonKind = "preflight_differs"
	NoCommit         ReasonKind = "no_commit"
	NoModelHashes    ReasonKind = "no_model_hashes"
	UnhashedModel    ReasonKind = "unhashed_model_file"
	NoTemplate       ReasonKind = "no_template"
	ReasoningBudget  ReasonKind = "reasoning_budget"
	OtherModel       ReasonKind = "model_not_of_profile"
	ForeignRequests  ReasonKind = "foreign_requests"
)

// Partial kinds.
const (
	SkippedWork ReasonKind = "skipped_required_work"
	Interrupted ReasonKind = "interrupted"
)

// Partial reports whether the kind makes a run partial (else nonconforming).
func (k ReasonKind) Partial() bool { return k == SkippedWork || k == Interrupted }

// ReasonKinds are every reason kind, nonconforming then partial.
func ReasonKinds() []ReasonKind {
	return []ReasonKind{RemoteServer, SimulatedEngine, RefusedRequest, SettingOtherwise, SettingNotTaken, CacheReuseKind, LengthRule, PreflightDiffers,
		NoCommit, NoModelHashes, UnhashedModel, NoTemplate, ReasoningBudget, OtherModel, ForeignRequests, SkippedWork, Interrupted}
}
