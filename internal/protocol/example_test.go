package protocol_test

import (
	"fmt"

	"github.com/strata-bench/strata/internal/protocol"
)

// The schedule is data: the required stages' request count and each
// request's ID come from the protocol, never from a flag.
func ExamplePlannedCount() {
	fmt.Println(protocol.PlannedCount(protocol.PhaseSanity, false))
	fmt.Println(protocol.PlannedCount(protocol.PhasePerformance, false))
	fmt.Println(protocol.PerformanceCases())
	fmt.Println(protocol.PerformanceID(protocol.CasePrompt16K, 2))
	fmt.Println(protocol.ConcurrencyID(1, 3), protocol.ConcurrencySeed(1, 3))
	// Output:
	// 12
	// 9
	// [short prompt-4k prompt-16k]
	// performance-prompt-16k-r2
	// concurrency-r1-c3 3
}

// The length rule: a performance case's prompt is within 2 % of its
// target token count.
func ExampleLengthRule() {
	target, _ := protocol.TargetTokens(protocol.CasePrompt4K)
	fmt.Println(target)
	fmt.Println(protocol.LengthRule(target*102/100, target).Within)
	fmt.Println(protocol.LengthRule(target*102/100+1, target).Within)
	// Output:
	// 4096
	// true
	// false
}

// A finish reason says whether the answer was cut short.
func ExampleFinishStatus() {
	for _, reason := range []string{"stop", "length", "tool_calls", "eos"} {
		truncated, known := protocol.FinishStatus(reason)
		fmt.Println(reason, truncated, known)
	}
	// Output:
	// stop false true
	// length true true
	// tool_calls false true
	// eos false false
}

// Only a loopback address is a local engine.
func ExampleIsLoopback() {
	for _, host := range []string{"127.0.0.1", "::1", "localhost", "192.168.1.20"} {
		fmt.Println(host, protocol.IsLoopback(host))
	}
	// Output:
	// 127.0.0.1 true
	// ::1 true
	// localhost true
	// 192.168.1.20 false
}
