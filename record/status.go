package record

import (
	"fmt"
	"slices"
	"time"

	"github.com/geas-dev/geas/internal/jsonobj"
	"github.com/geas-dev/geas/vocab"
)

// SetContractStatus returns contract (a task contract's JSON) with "status" set to the state to and
// "updated_at" to Timestamp(now); either key is appended when missing. Every other top-level key
// keeps its position and its value's bytes (nested objects and arrays are re-indented only), so a
// transition shows up in a diff as exactly the lines it changed. It does not check that the move
// is legal: call vocab.CheckTransition first.
func SetContractStatus(contract []byte, to vocab.State, now time.Time) ([]byte, error) {
	if !slices.Contains(vocab.States(), to) {
		return nil, fmt.Errorf("set contract status: %q is not a task state", to)
	}
	members, err := jsonobj.Decode(contract)
	if err != nil {
		return nil, fmt.Errorf("set contract status: contract: %w", err)
	}
	members = jsonobj.Set(members, "status", jsonobj.String(string(to)))
	members = jsonobj.Set(members, "updated_at", jsonobj.String(Timestamp(now)))
	return jsonobj.Encode(members)
}
