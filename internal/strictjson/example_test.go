package strictjson_test

import (
	"fmt"

	"github.com/strata-bench/strata/internal/strictjson"
)

// A results.json with a name written twice could mean either value; the
// strict reader refuses it and says where.
func ExampleCheck() {
	fmt.Println(strictjson.Check([]byte(`{"run_id": "a", "status": "conforming"}`)))
	fmt.Println(strictjson.Check([]byte(`{"run": {"status": "conforming", "status": "partial"}}`)))
	fmt.Println(strictjson.Check([]byte("{\"model\": \"\xff\"}")))
	// Output:
	// <nil>
	// /run/status (byte 33): a duplicate object name (readers would disagree on its value)
	// /model (byte 11): invalid UTF-8
}
