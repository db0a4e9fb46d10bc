package gate

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/tiers"
	"github.com/geas-dev/geas/vocab"
)

// maxEventLineBytes bounds one line of the event log read by StateBacking; a longer line ends the
// scan, which can only leave a state unbacked (fail closed).
const maxEventLineBytes = 1 << 20

// StateBacking reports whether a task's state escalated, blocked or cancelled is one that the
// gate's records (or geas's own command) put it in, and says what was checked and found. The Stop
// hook lets an agent stop on such a task, and geas gate --all leaves a cancelled task out of the
// count, only when the state is backed:
//
//	escalated  the gate history verifies and its latest gate run is a fail that spent the last
//	           retry (retry_budget_after 0)
//	blocked    the gate history verifies and its latest gate runs are errors with one cause, as
//	           many as the policy's consecutive-error limit
//	cancelled  .geas/state/events.jsonl records a task_transition of this task to cancelled, which
//	           geas task transition writes and a hand edit of contract.json does not (this is
//	           attribution, not authentication: anyone may run geas task transition)
func StateBacking(in *tiers.Snapshot, state vocab.State) (bool, string) {
	if state == vocab.Cancelled {
		return cancelBacked(in)
	}
	if in.Record == nil {
		return false, fmt.Sprintf("record.json cannot be read (%v), so no gate run backs the state", in.RecordErr)
	}
	hist := in.Record.History()
	if err := record.VerifyChain(hist); err != nil {
		return false, "the gate history does not verify: " + err.Error()
	}
	if key := record.SigningKey(); key != nil {
		if bad := record.VerifySignatures(hist, key); len(bad) > 0 {
			return false, "the gate history does not verify: " + bad[0].Error()
		}
	}
	last, _, ok := record.LastRun(in.Record)
	switch state {
	case vocab.Escalated:
		if !ok {
			return false, "the gate history records no gate run, so no fail spent the last retry"
		}
		after := "null"
		if last.RetryBudgetAfter != nil {
			after = fmt.Sprint(*last.RetryBudgetAfter)
		}
		if last.Verdict != string(vocab.VerdictFail) || last.RetryBudgetAfter == nil || *last.RetryBudgetAfter != 0 {
			return false, fmt.Sprintf("the latest gate run %s has verdict %s and retry_budget_after %s, not a fail that spent the last retry", last.RunID, last.Verdict, after)
		}
		before := "null"
		if last.RetryBudgetBefore != nil {
			before = fmt.Sprint(*last.RetryBudgetBefore)
		}
		return true, fmt.Sprintf("the latest gate run %s is a fail that spent the last retry (%s -> 0)", last.RunID, before)
	case vocab.Blocked:
		n, cause := record.ConsecutiveErrors(in.Record)
		limit := in.Policy.ConsecutiveErrorLimit
		if n < limit {
			return false, fmt.Sprintf("the gate history ends in %d error run(s) with one cause, fewer than the consecutive-error limit %d", n, limit)
		}
		return true, fmt.Sprintf("the latest %d gate runs are errors with cause %s (limit %d)", n, cause, limit)
	}
	return false, "state " + string(state) + " is not one a stop is allowed in"
}

// cancelBacked looks for the task_transition event of geas task transition --to cancelled.
func cancelBacked(in *tiers.Snapshot) (bool, string) {
	f, err := fsutil.OpenRegular(in.Geas, record.EventsFile) // a named pipe is refused, not waited on
	if errors.Is(err, fs.ErrNotExist) {
		return false, "there is no .geas/" + record.EventsFile + ", so no task_transition to cancelled was recorded"
	}
	if err != nil {
		return false, fmt.Sprintf("read .geas/%s: %v", record.EventsFile, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false, ".geas/" + record.EventsFile + " is not a regular file"
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventLineBytes)
	for sc.Scan() {
		// Keys are read exactly: encoding/json would match "TASK_ID" to a task_id field.
		var ev map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if jsonStr(ev["event_type"]) != record.EventTaskTransition || jsonStr(ev["mission_id"]) != in.Mission || jsonStr(ev["task_id"]) != in.Task {
			continue
		}
		var data map[string]json.RawMessage
		if json.Unmarshal(ev["data"], &data) != nil || jsonStr(data["to"]) != string(vocab.Cancelled) {
			continue
		}
		by := jsonStr(ev["agent"])
		if by == "" {
			by = jsonStr(data["by"])
		}
		if by == "" {
			by = "an unnamed agent"
		}
		return true, fmt.Sprintf(".geas/%s records a task_transition to cancelled at %s by %s", record.EventsFile, jsonStr(ev["timestamp"]), by)
	}
	if err := sc.Err(); err != nil {
		return false, fmt.Sprintf("read .geas/%s: %v", record.EventsFile, err)
	}
	return false, ".geas/" + record.EventsFile + " records no task_transition of this task to cancelled: the state was not set by geas task transition"
}

// jsonStr is a raw JSON string's value, or "" when it is not a string.
func jsonStr(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}
