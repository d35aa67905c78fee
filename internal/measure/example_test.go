package measure_test

import (
	"fmt"

	"github.com/strata-bench/strata/internal/measure"
	"github.com/strata-bench/strata/internal/protocol"
)

func i64(v int64) *int64     { return &v }
func f64(v float64) *float64 { return &v }
func show(v *float64) string {
	if v == nil {
		return "null"
	}
	return fmt.Sprintf("%.1f", *v)
}

// A rate is the engine's count over the engine's own duration, or null
// with the reason; never a client-side guess.
func ExampleRate() {
	v, reason := measure.Rate(i64(4096), f64(2.048), "read_tokens", "prompt_s", "prompt time")
	fmt.Printf("%s %q\n", show(v), reason)
	v, reason = measure.Rate(i64(4096), nil, "read_tokens", "prompt_s", "prompt time")
	fmt.Printf("%s %q\n", show(v), reason)
	v, reason = measure.Rate(i64(0), f64(0), "read_tokens", "prompt_s", "prompt time")
	fmt.Printf("%s %q\n", show(v), reason)
	// Output:
	// 2000.0 ""
	// null "read_tokens or prompt_s is null"
	// null "read_tokens is 0"
}

// Reuse of the user payload: cached tokens beyond the longest prefix the
// request shares with another, plus the allowance for a boundary.
func ExampleCacheReuse() {
	for _, cached := range []int64{0, 120 + protocol.CacheBoundaryAllowance, 120 + protocol.CacheBoundaryAllowance + 1} {
		bad, reason := measure.CacheReuse(i64(cached), 120)
		fmt.Printf("%d %v %q\n", cached, bad, reason)
	}
	// Output:
	// 0 false ""
	// 128 false ""
	// 129 true "unexpected cache reuse: cached_tokens 129 > max_shared_prefix_tokens 120 + 8"
}

// The length rule on the engine's own prompt count.
func ExampleLengthViolation() {
	for _, n := range []int64{4096, 4177, 4178} {
		bad, reason := measure.LengthViolation(protocol.CasePrompt4K, i64(n))
		fmt.Printf("%d %v %q\n", n, bad, reason)
	}
	// Output:
	// 4096 false ""
	// 4177 false ""
	// 4178 true "measured input_tokens 4178 of prompt-4k is not within 2% of 4096 (a different tokenizer or template)"
}

// The median of an even count is the mean of the middle two.
func ExampleMedian() {
	fmt.Println(measure.Median([]float64{40.1, 39.8, 41.0}))
	fmt.Println(measure.Median([]float64{1, 4, 2, 3}))
	// Output:
	// 40.1
	// 2.5
}
