// Package e2e holds the end-to-end tests: the real runner against the
// simulated engine with scripted scenarios (and replayed llama-server
// captures), each result folder written, redacted and validated as
// `strata bench report` does.
package e2e
