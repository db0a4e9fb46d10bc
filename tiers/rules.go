package tiers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/jsonobj"
	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/schemas"
)

// PinnedFile is the pinned copy of a task's rules, beside its contract (SPEC §4.4).
const PinnedFile = record.PinnedFile

// PinnedMaxBytes bounds the read of the pinned copy: it holds a contract and a policy,
// pretty-printed, so it allows for both at their limits.
const PinnedMaxBytes = 4 * (contract.MaxBytes + policy.MaxBytes)

// unpinnedContractFields are the contract fields that are not rules: the state, which the gate
// itself moves, geas's envelope timestamps, and the "$schema" an editor binds the file to, which
// the gate ignores (so pointing it elsewhere never reads as a rules change that blocks a task).
var unpinnedContractFields = []string{"status", "created_at", "updated_at", schemas.SchemaKey}

// rulesOf returns the task's rules (SPEC §4.4): every contract field except its status and
// envelope timestamps (unpinnedContractFields), plus the effective gate policy document without
// its "$schema", and their RFC 8785 digest.
func rulesOf(in *Snapshot) (map[string]any, string, error) {
	if in.Contract == nil {
		return nil, "", errors.New("the contract could not be read")
	}
	if in.PolicyErr != nil {
		return nil, "", errors.New("the gate policy could not be read")
	}
	c, err := jsonobj.DecodeMap(in.Contract.Raw)
	if err != nil {
		return nil, "", fmt.Errorf("contract: %w", err)
	}
	for _, k := range unpinnedContractFields {
		delete(c, k)
	}
	p := map[string]any{}
	if in.PolicyRaw != nil {
		if p, err = jsonobj.DecodeMap(in.PolicyRaw); err != nil {
			return nil, "", fmt.Errorf("policy: %w", err)
		}
		delete(p, schemas.SchemaKey)
	}
	rules := map[string]any{"contract": c, "policy": p}
	if b := baseRule(in); b != nil {
		rules["base"] = b
	}
	sum, err := canon.SHA256(rules)
	if err != nil {
		return nil, "", err
	}
	return rules, sum, nil
}

// baseRule is the rules' record of what an unpinned base_snapshot (a branch, a tag, HEAD~1, an
// abbreviated id: anything but a full SHA) resolved to, {"base_snapshot": NAME, "commit": SHA or
// null when it did not resolve}, so that a base moved after the pin changes the rules (SPEC §4.4,
// §5.1) and the diff no longer hides what the move took out of it. A full SHA names one commit
// for good and adds nothing, so the rules of a pinned base are those of the contract and policy.
func baseRule(in *Snapshot) map[string]any {
	base := in.Contract.BaseSnapshot
	if base == "" || fullSHA().MatchString(base) {
		return nil
	}
	var commit any
	if in.BaseCommit != "" {
		commit = in.BaseCommit
	}
	return map[string]any{"base_snapshot": base, "commit": commit}
}

// RulesNow returns the task's rules as they are now, when they digest to want: the pinned copy of
// an approval (or a first run) cut short is written from them (SPEC §7.3), and rules that changed
// since are not pinned under an approval of others. It reads only what the rules are made of
// (readRuled: the contract, the record, the policy and the base it resolves), not the evidence.
func RulesNow(p *project.Project, mission, task, taskDir, want string) (map[string]any, bool) {
	in := &Snapshot{ProjectDir: p.Dir, Root: p.Root, Geas: p.Geas, Mission: mission, Task: task, TaskDir: taskDir}
	dir := fsutil.OpenSubdir(p.Geas, taskDir)
	in.files = dir
	in.readRuled(dir, nil, nil)
	in.files = nil
	dir.Close()
	in.Release()
	rules, sum, err := rulesOf(in)
	if err != nil || rules == nil || sum != want {
		return nil, false
	}
	return rules, true
}

// rulesDiff names each field that differs between the pinned and the current rules, with both
// values: `eval_commands[0]: "go test ./..." → "true"`. Contract fields are named as in the
// contract, policy fields with the prefix "gate-policy.".
func rulesDiff(pinned, current map[string]any) []string {
	var out []string
	pc, _ := pinned["contract"].(map[string]any)
	cc, _ := current["contract"].(map[string]any)
	diffValue("", pc, cc, &out)
	pp, _ := pinned["policy"].(map[string]any)
	cp, _ := current["policy"].(map[string]any)
	diffValue("gate-policy", pp, cp, &out)
	if b := baseMoved(pinned["base"], current["base"]); b != "" {
		out = append(out, b)
	}
	return out
}

// baseMoved names an unpinned base whose resolution differs between the pinned and the current
// rules: `base_snapshot "main" resolved to <sha> when pinned, now to <sha>`; "" when it did not
// move. A base_snapshot changed in the contract (renamed, or pinned to a full SHA) is named by the
// contract's own diff.
func baseMoved(pinned, current any) string {
	p, _ := pinned.(map[string]any)
	c, _ := current.(map[string]any)
	if p == nil || c == nil || p["base_snapshot"] != c["base_snapshot"] || p["commit"] == c["commit"] {
		return ""
	}
	return fmt.Sprintf("base_snapshot %s resolved to %s when pinned, now to %s", showValue(c["base_snapshot"]), resolution(p), resolution(c))
}

// resolution shows the commit a base rule names.
func resolution(b map[string]any) string {
	if sha, _ := b["commit"].(string); sha != "" {
		return sha
	}
	return "nothing (it did not resolve)"
}

func diffValue(at string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(av)+len(bv))
			for k := range av {
				keys = append(keys, k)
			}
			for k := range bv {
				if _, ok := av[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				x, inA := av[k]
				y, inB := bv[k]
				next := k
				if at != "" {
					next = at + "." + k
				}
				switch {
				case !inA:
					*out = append(*out, fmt.Sprintf("%s: (absent) → %s", next, showValue(y)))
				case !inB:
					*out = append(*out, fmt.Sprintf("%s: %s → (absent)", next, showValue(x)))
				default:
					diffValue(next, x, y, out)
				}
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := 0; i < max(len(av), len(bv)); i++ {
				next := at + "[" + strconv.Itoa(i) + "]"
				switch {
				case i >= len(av):
					*out = append(*out, fmt.Sprintf("%s: (absent) → %s", next, showValue(bv[i])))
				case i >= len(bv):
					*out = append(*out, fmt.Sprintf("%s: %s → (absent)", next, showValue(av[i])))
				default:
					diffValue(next, av[i], bv[i], out)
				}
			}
			return
		}
	}
	x, _ := canon.Marshal(a)
	y, _ := canon.Marshal(b)
	if !bytes.Equal(x, y) {
		*out = append(*out, fmt.Sprintf("%s: %s → %s", at, showValue(a), showValue(b)))
	}
}

// showValue is a value's compact JSON, cut to 240 bytes.
func showValue(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	s := strings.TrimSuffix(buf.String(), "\n")
	if len(s) > 240 {
		s = text.Cut(s, 237) + "..."
	}
	return s
}
