package record

import (
	"fmt"
	"time"

	"github.com/geas-dev/geas/internal/jsonobj"
)

// SetContractBase returns contract (a task contract's JSON) with "base_snapshot" set to base and
// "updated_at" to Timestamp(now), either key appended when missing, every other key kept as
// SetContractStatus keeps it: the contract write of geas task revalidate, whose caller validates
// the result and approves the rules it makes (SPEC §5.3 Part B).
func SetContractBase(contract []byte, base string, now time.Time) ([]byte, error) {
	members, err := jsonobj.Decode(contract)
	if err != nil {
		return nil, fmt.Errorf("set base_snapshot: contract: %w", err)
	}
	members = jsonobj.Set(members, "base_snapshot", jsonobj.String(base))
	members = jsonobj.Set(members, "updated_at", jsonobj.String(Timestamp(now)))
	return jsonobj.Encode(members)
}
