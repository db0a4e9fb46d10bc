package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/geas-dev/geas/record"
)

// cmdRechain forges a history the way anyone who can write the task's files but has no key can
// (FILE is record.json; the history is the gate-history.jsonl beside it):
//
//	rechain FILE BUDGET        set gate_history entry 1's retry_budget_after to BUDGET
//	rechain -drop FILE         drop the newest gate_history entry
//
// then recompute every hash and prev_hash (dropping the HMACs, which need the key) and point
// gate_result's run_id, verdict and hash at the new newest gate run.
func cmdRechain(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! rechain")
	}
	drop := len(args) > 0 && args[0] == "-drop"
	if drop {
		args = args[1:]
	}
	if (drop && len(args) != 1) || (!drop && len(args) != 2) {
		ts.Fatalf("usage: rechain FILE BUDGET | rechain -drop FILE")
	}
	name := ts.MkAbs(args[0])
	data, err := os.ReadFile(name)
	ts.Check(err)
	rec, err := record.LoadPath(name)
	ts.Check(err)
	hist := rec.History()
	if drop {
		hist = hist[:len(hist)-1]
	} else {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		hist[0].RetryBudgetAfter = &n
	}
	prev := ""
	for i := range hist {
		hist[i].PrevHash, hist[i].HMAC = prev, ""
		hist[i].Hash, err = record.EntryHash(hist[i])
		ts.Check(err)
		prev = hist[i].Hash
	}
	var doc map[string]json.RawMessage
	ts.Check(json.Unmarshal(data, &doc))
	var gr map[string]any
	ts.Check(json.Unmarshal(doc["gate_result"], &gr))
	for i := len(hist) - 1; i >= 0; i-- {
		if k := hist[i].Kind; k == "" || k == record.KindGateRun {
			gr["run_id"], gr["verdict"], gr["hash"] = hist[i].RunID, hist[i].Verdict, hist[i].Hash
			gr["retry_budget_before"], gr["retry_budget_after"] = hist[i].RetryBudgetBefore, hist[i].RetryBudgetAfter
			break
		}
	}
	doc["gate_result"], err = json.Marshal(gr)
	ts.Check(err)
	delete(doc, "gate_history")
	var lines []byte
	for _, e := range hist {
		line, err := json.Marshal(e)
		ts.Check(err)
		lines = append(append(lines, line...), '\n')
	}
	ts.Check(os.WriteFile(filepath.Join(filepath.Dir(name), record.HistoryFile), lines, 0o644))
	out, err := json.MarshalIndent(doc, "", "  ")
	ts.Check(err)
	ts.Check(os.WriteFile(name, out, 0o644))
}
