package contract

// JSON Pointers of results.json that strata writes null reasons for and
// validation names: one name each, so a reason and the field it explains
// cannot drift apart. Ptr… are absolute; Req… are relative to one request
// record (Pointer("requests", i) + Req…).
const (
	PtrConfigurationChatTemplateKwargs = "/configuration/chat_template_kwargs"
	PtrConfigurationContextTokens      = "/configuration/context_tokens"
	PtrConfigurationSampling           = "/configuration/sampling"
	PtrConfigurationServerCapacity     = "/configuration/server_capacity"
	PtrConfigurationTemplate           = "/configuration/template"
	PtrConfigurationTrack              = "/configuration/track"
	PtrConfigurationTrackNotes         = "/configuration/track_notes"
	PtrHardwareBackgroundWorkloads     = "/hardware/background_workloads"
	PtrHardwareCPU                     = "/hardware/cpu"
	PtrHardwareGPUs                    = "/hardware/gpus"
	PtrSelectedDeviceIndices           = "/extensions/selected_devices/device_indices"
	PtrEngineLog                       = "/extensions/engine/log"
	PtrEngineServedAnswered            = "/extensions/engine/served_before_run/requests_answered"
	PtrEngineConfigGiven               = "/extensions/engine_config/given"
	PtrEngineDialectBudgetField        = "/extensions/engine_dialect/reasoning_budget/field"
	PtrEngineDialectBudgetValue        = "/extensions/engine_dialect/reasoning_budget/value"
	PtrEnergySource                    = "/extensions/energy/source"
	PtrHardwareGPU0MemoryBytes         = "/hardware/gpus/0/memory_bytes"
	PtrHardwareGPU0PowerLimitW         = "/hardware/gpus/0/power_limit_w"
	PtrHardwareRAMBytes                = "/hardware/ram_bytes"
	PtrHardwareStorage                 = "/hardware/storage"
	ReqMetrics                         = "/metrics"
	ReqMetricsDecodeTPS                = "/metrics/decode_tps"
	ReqMetricsPromptTPS                = "/metrics/prompt_tps"
	PtrModelCustomPack                 = "/model/custom_pack"
	PtrModelFiles                      = "/model/files"
	PtrModelID                         = "/model/id"
	PtrModelQuantization               = "/model/quantization"
	PtrModelRevision                   = "/model/revision"
	PtrModelSourceRevision             = "/model/source_revision"
	PtrModelTokenizerRevision          = "/model/tokenizer_revision"
	PtrProtocolCorpusSHA256            = "/protocol/corpus_sha256"
	PtrProtocolGitCommit               = "/protocol/git_commit"
	PtrProtocolID                      = "/protocol/id"
	PtrProtocolModelCardRevision       = "/protocol/model_card_revision"
	PtrProtocolProfile                 = "/protocol/profile"
	PtrRunCommand                      = "/run/command"
	PtrRunID                           = "/run/id"
	PtrRunOptionalDurationS            = "/run/optional_duration_s"
	PtrRunRequiredDurationS            = "/run/required_duration_s"
	PtrRunStartedAt                    = "/run/started_at"
	PtrRunStatus                       = "/run/status"
	PtrSoftwareBuildOptions            = "/software/build_options"
	PtrSoftwareDrivers                 = "/software/drivers"
	PtrSoftwareEngineVersion           = "/software/engine_version"
	PtrSoftwareOS                      = "/software/os"
	PtrSoftwareOSVersion               = "/software/os/version"
	PtrSoftwareRunnerCommit            = "/software/runner_commit"
	PtrSoftwareRuntime                 = "/software/runtime"
	PtrSoftwareStrataCommit            = "/software/strata_commit"
	ReqSourcesCachedTokens             = "/sources/cached_tokens"
	ReqSourcesClientTimings            = "/sources/client_timings"
	ReqSourcesDecodeTokens             = "/sources/decode_tokens"
	ReqSourcesEngineTimings            = "/sources/engine_timings"
	ReqSourcesInputTokens              = "/sources/input_tokens"
	ReqSourcesOutputTokens             = "/sources/output_tokens"
	ReqSourcesReadTokens               = "/sources/read_tokens"
	ReqTimingsDecodeS                  = "/timings/decode_s"
	ReqTimingsFirstAnswerS             = "/timings/first_answer_s"
	ReqTimingsPromptS                  = "/timings/prompt_s"
	ReqTimingsTotalS                   = "/timings/total_s"
	ReqTimingsTTFTS                    = "/timings/ttft_s"
	ReqTokenAccountingNote             = "/token_accounting_note"
	ReqTokensCachedTokens              = "/tokens/cached_tokens"
	ReqTokensDecodeTokens              = "/tokens/decode_tokens"
	ReqTokensInputTokens               = "/tokens/input_tokens"
	ReqTokensOutputTokens              = "/tokens/output_tokens"
	ReqTokensReadTokens                = "/tokens/read_tokens"
)

// NotDeclared is the reason an operator-declared field is null: the runner
// never guesses it, and how would have told it.
func NotDeclared(how string) string { return "not declared: " + how }

// NotApplicable is the reason a field that does not apply is null (the
// spec: "including not-applicable values").
func NotApplicable(why string) string { return "not applicable: " + why }
