package tiers

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/testresults"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// The comparison with the base (SPEC §5.2a.5): with policy tests.compare_base, the eval commands
// that declare results also run on an isolated checkout of the base, and every test that passed
// there must pass at the head, by name.
//
// The base run is kept under the task's gate-logs/baseline/, one file per (base commit, rules
// digest), and reused. That directory is agent-writable, and a forged baseline with fewer passing
// tests would hide a dropped test, so a cached file is believed only when it carries an
// HMAC-SHA256 made with the history key (GEAS_GATE_KEY, which the gate already keeps from the
// code it runs) over exactly the bytes of its payload, and the payload names this task, this
// base, this rules digest and these commands. Without a key nothing the agents cannot write
// vouches for the file, so the base runs again on every run and no file is written.

const (
	// baselineDir holds the cached base runs, relative to the task directory.
	baselineDir = "gate-logs/baseline"
	// baselineVersion is the version of the cached file's payload; another version is re-run.
	baselineVersion = 1
	// maxBaselineBytes bounds a cached file: MaxNames names of at most MaxNameBytes each, escaped.
	maxBaselineBytes = 64 << 20
	// maxDroppedNamed is how many dropped tests the evidence names.
	maxDroppedNamed = 20
)

const testsDroppedText = "every test that passed at the base passes at the head, by name (tests.compare_base)"

// baselineFile is the cached file: the payload's bytes as written, and their MAC.
type baselineFile struct {
	HMAC     string          `json:"hmac_sha256"`
	Baseline json.RawMessage `json:"baseline"`
}

// baselinePayload is one base run.
type baselinePayload struct {
	Version     int               `json:"version"`
	Task        string            `json:"task"`
	Base        string            `json:"base"`
	RulesSHA256 string            `json:"rules_sha256"`
	DurationMS  int64             `json:"duration_ms"`
	Commands    []baselineCommand `json:"commands"`
}

// baselineCommand is what one eval command's declared results said at the base.
type baselineCommand struct {
	Command   string   `json:"command"`
	Results   string   `json:"results"`
	Passed    int      `json:"passed"`
	Failed    int      `json:"failed"`
	Skipped   int      `json:"skipped"`
	Truncated bool     `json:"truncated,omitempty"`
	Error     string   `json:"error,omitempty"` // the results could not be read
	Pass      []string `json:"pass"`            // the tests that passed, sorted
}

// resultCommands are the contract's eval commands that declare results.
func (pass *Pass) resultCommands() []contract.EvalCommand {
	var out []contract.EvalCommand
	for _, ec := range pass.in.Contract.EvalCommands {
		if ec.Results != nil {
			out = append(out, ec)
		}
	}
	return out
}

// baseOutcome is what the comparison with the base found before the head is compared: done is
// the check when there is nothing to compare (skipped, or the base could not run); else base is
// the base run and how says where it came from, and store, when set, asks the run to cache it.
// Neither set: the run was interrupted.
type baseOutcome struct {
	done  *Check
	base  *baselinePayload
	how   string
	store *baselineStore
}

// baselineStore is where and with what key the run caches a base run it made.
type baselineStore struct {
	name string
	key  []byte
}

// compareBase prepares the tests_dropped check. It runs in tier 1 after the eval commands and the
// integrity checks, and only when they all passed (tier1Passed): a failing tier 1 stops the run
// anyway. The run caches a fresh base run (writeBaseline) and compares (dropped).
func compareBase(ctx context.Context, pass *Pass, profile vocab.Profile, tier1Passed bool) baseOutcome {
	pol := pass.in.Policy.Tests
	if pol.Off || !pol.CompareBase || profile != vocab.ImplementationChange {
		return baseOutcome{}
	}
	skip := func(why string) baseOutcome {
		c := skippedCheck(1, "tests_dropped", testsDroppedText, why)
		return baseOutcome{done: &c}
	}
	switch {
	case !pass.haveBase || pass.repo == nil:
		return skip("no base to compare with")
	case len(pass.resultCommands()) == 0:
		return skip("no eval command declares its results: nothing to compare by name")
	case !tier1Passed:
		return skip("not run: tier 1 failed")
	}
	return baseRun(ctx, pass)
}

// baseRun returns the base run: the cached one when it can be trusted, else a fresh one (to be
// stored when the run writes and a key signs it). how says which, for the evidence. The check is
// returned when the base could not run at all.
func baseRun(ctx context.Context, pass *Pass) baseOutcome {
	key := record.SigningKey()
	name := pass.baselineName()
	var why string
	if key == nil {
		why = "not cached: no " + record.SigningKeyEnv + " to sign the cache with"
	} else {
		p, err := readBaseline(pass, name, key)
		if err == nil {
			return baseOutcome{base: p, how: fmt.Sprintf("run cached in .geas/%s (signed; the base run took %s)", name, tier1Duration(p.DurationMS))}
		}
		why = "cache not used: " + err.Error()
	}
	p, ch := runBase(ctx, pass)
	if ch != nil {
		return baseOutcome{done: ch}
	}
	if ctx.Err() != nil {
		return baseOutcome{}
	}
	out := baseOutcome{base: p, how: fmt.Sprintf("run now on a checkout of the base in %s; %s", tier1Duration(p.DurationMS), why)}
	if key != nil && pass.opts.LogRoot != nil && !pass.opts.DryRun && !pass.opts.Verify {
		out.store = &baselineStore{name: name, key: key}
	}
	return out
}

// baselineName is the cached file of this base and rules digest, relative to .geas.
func (pass *Pass) baselineName() string {
	rules := pass.in.RulesSHA256
	if len(rules) > 16 {
		rules = rules[:16]
	}
	return path.Join(pass.in.TaskDir, baselineDir, pass.base+"-"+rules+".json")
}

// taskName names the task in a cached file.
func (pass *Pass) taskName() string { return pass.in.Mission + "/" + pass.in.Task }

// readBaseline reads a cached base run and says why it is not believed: not a regular file, too
// large, not signed with key, or about another task, base, rules digest or command list.
func readBaseline(pass *Pass, name string, key []byte) (*baselinePayload, error) {
	fi, err := pass.in.Geas.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("no cached run of this base and rules")
	}
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", name)
	}
	data, err := fsutil.ReadLimited(pass.in.Geas, name, maxBaselineBytes)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	var f baselineFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", name, err)
	}
	want := baselineMAC(key, f.Baseline)
	got, err := hex.DecodeString(f.HMAC)
	if err != nil || !hmac.Equal(got, want) {
		return nil, fmt.Errorf("%s is not signed with %s: not believed", name, record.SigningKeyEnv)
	}
	var p baselinePayload
	dec = json.NewDecoder(bytes.NewReader(f.Baseline))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("%s does not parse: %w", name, err)
	}
	switch {
	case p.Version != baselineVersion:
		return nil, fmt.Errorf("%s is version %d", name, p.Version)
	case p.Task != pass.taskName() || p.Base != pass.base || p.RulesSHA256 != pass.in.RulesSHA256:
		return nil, fmt.Errorf("%s is about %s at %s under rules %.12s", name, p.Task, short(p.Base), p.RulesSHA256)
	}
	cmds := pass.resultCommands()
	if len(p.Commands) != len(cmds) {
		return nil, fmt.Errorf("%s lists %d commands, the contract %d", name, len(p.Commands), len(cmds))
	}
	for i, ec := range cmds {
		if p.Commands[i].Command != ec.Run || p.Commands[i].Results != ec.Results.Format {
			return nil, fmt.Errorf("%s lists other commands", name)
		}
	}
	return &p, nil
}

// baselineMACDomain prefixes what the MAC covers, so that no other MAC made with the same key
// (a history entry's) can be taken for a baseline's.
const baselineMACDomain = "geas baseline v1\n"

// baselineMAC is the HMAC-SHA256 of a payload's bytes.
func baselineMAC(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(baselineMACDomain))
	m.Write(payload)
	return m.Sum(nil)
}

// writeBaseline stores p, signed with key, as name under geas: written to a new file and renamed
// into place, in a directory that must be a real directory (not a link).
func writeBaseline(geas *os.Root, name string, key []byte, p *baselinePayload) error {
	payload, err := json.Marshal(p)
	if err != nil {
		return err
	}
	data, err := json.Marshal(baselineFile{HMAC: hex.EncodeToString(baselineMAC(key, payload)), Baseline: payload})
	if err != nil {
		return err
	}
	if len(data) > maxBaselineBytes {
		return fmt.Errorf("%d bytes, more than the %d it could be read back with", len(data), maxBaselineBytes)
	}
	dir := path.Dir(name)
	if err := geas.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range []string{path.Dir(dir), dir} {
		fi, err := geas.Lstat(d)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf(".geas/%s is not a directory", d)
		}
	}
	tmp := fmt.Sprintf("%s.%d.tmp", name, time.Now().UnixNano())
	f, err := geas.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = geas.Rename(tmp, name)
	}
	if err != nil {
		_ = geas.Remove(tmp)
	}
	return err
}

// runBase runs the eval commands that declare results on an isolated checkout of the base, each
// one whatever the others did (a test failing at the base is what a task may fix). A checkout
// that cannot be made, or a command that cannot start, is an error check.
func runBase(ctx context.Context, pass *Pass) (*baselinePayload, *Check) {
	started := pass.env.Now()
	co, _, err := pass.scratch(pass.base, nil)
	if err != nil {
		var se *scratchError
		errors.As(err, &se)
		if se.step == scratchCheckout {
			ch := gitFailCheck(1, "tests_dropped", testsDroppedText, fmt.Sprintf("cannot check out the base %s to run the eval commands there: %v", short(pass.base), se.err), se.err, StatusError, vocab.CauseCheckoutFailed)
			return nil, &ch
		}
		ev := fmt.Sprintf("checkout of the base %s: %v", short(pass.base), se.err)
		if se.step == scratchChown {
			ev = fmt.Sprintf("give the checkout of the base %s to eval_user %s: %v", short(pass.base), pass.exec.runAs, se.err)
		}
		ch := failCheck(1, "tests_dropped", testsDroppedText, ev, StatusError, vocab.CauseCheckoutFailed)
		return nil, &ch
	}
	defer co.remove()
	dir, root := co.dir, co.root
	p := &baselinePayload{Version: baselineVersion, Task: pass.taskName(), Base: pass.base, RulesSHA256: pass.in.RulesSHA256}
	for _, ec := range pass.resultCommands() {
		_, runs, _ := tier1(ctx, tier1Input{
			Commands:       []contract.EvalCommand{ec},
			DefaultTimeout: pass.defaultTimeout(),
			ProjectDir:     dir,
			Root:           root,
			TailBytes:      pass.in.Policy.OutputTailBytes,
			RunAs:          pass.exec.runAs,
			Start:          pass.env.Start,
		})
		if ctx.Err() != nil {
			return nil, nil
		}
		if len(runs) == 0 || runs[0].Status == StatusError {
			why := "it could not start"
			if len(runs) > 0 && runs[0].Error != "" {
				why += ": " + runs[0].Error
			}
			ch := failCheck(1, "tests_dropped", testsDroppedText, fmt.Sprintf("eval command `%s` cannot run on the checkout of the base %s, so the head cannot be compared with it: %s", ec.Run, short(pass.base), why), StatusError, vocab.CauseEvalUnstartable)
			return nil, &ch
		}
		p.Commands = append(p.Commands, baseCommand(ec, runs[0]))
	}
	p.DurationMS = pass.env.Now().Sub(started).Milliseconds()
	return p, nil
}

// baseCommand is what run, eval command ec at the base, says.
func baseCommand(ec contract.EvalCommand, run EvalRun) baselineCommand {
	c := baselineCommand{Command: ec.Run, Results: ec.Results.Format, Pass: []string{}}
	if run.Tests != nil {
		c.Passed, c.Failed, c.Skipped, c.Error = run.Tests.Passed, run.Tests.Failed, run.Tests.Skipped, run.Tests.Error
	}
	if s := run.TestResults; s != nil {
		c.Truncated = s.Truncated
		for n, o := range s.Names {
			if o == testresults.Pass {
				c.Pass = append(c.Pass, n)
			}
		}
		slices.Sort(c.Pass)
	}
	return c
}

// dropped compares the head's results with the base run: each test that passed at the base must
// pass at the head, in any of the commands that declare results.
func dropped(pass *Pass, base *baselinePayload, how string) Check {
	head := map[string]testresults.Outcome{}
	headTruncated := false
	for _, run := range pass.evalRuns {
		s := run.TestResults
		if s == nil {
			continue
		}
		headTruncated = headTruncated || s.Truncated
		for n, o := range s.Names {
			if prev, ok := head[n]; !ok || prev != testresults.Pass {
				head[n] = o
			}
		}
	}
	seen := map[string]bool{}
	var lost []string
	var notes []string
	total := 0
	for _, c := range base.Commands {
		if c.Truncated {
			notes = append(notes, fmt.Sprintf("the base's results of `%s` list more than %d names: the first %d are compared", c.Command, testresults.MaxNames, testresults.MaxNames))
		}
		if c.Error != "" {
			notes = append(notes, fmt.Sprintf("the base's results of `%s` could not be read (%s): no test of it counts as passed at the base", c.Command, c.Error))
		}
		for _, n := range c.Pass {
			if seen[n] {
				continue
			}
			seen[n] = true
			total++
			switch o, ok := head[n]; {
			case !ok:
				lost = append(lost, fmt.Sprintf("%q missing", n))
			case o != testresults.Pass:
				lost = append(lost, fmt.Sprintf("%q %s", n, outcomeWord(o)))
			}
		}
	}
	if headTruncated {
		notes = append(notes, fmt.Sprintf("the head's results list more than %d names: a test not among them counts as missing", testresults.MaxNames))
	}
	note := ""
	if len(notes) > 0 {
		note = "; " + strings.Join(notes, "; ")
	}
	if len(lost) == 0 {
		return passCheck(1, "tests_dropped", testsDroppedText, fmt.Sprintf("the %d tests that passed at the base %s all pass at the head %s (%d tests there); base %s%s", total, short(pass.base), short(pass.head), len(head), how, note))
	}
	named := strings.Join(lost[:min(len(lost), maxDroppedNamed)], ", ")
	if len(lost) > maxDroppedNamed {
		named += fmt.Sprintf(" and %d more", len(lost)-maxDroppedNamed)
	}
	return failCheck(1, "tests_dropped", testsDroppedText, fmt.Sprintf("%d of the %d tests that passed at the base %s do not pass at the head %s: %s; base %s%s", len(lost), total, short(pass.base), short(pass.head), named, how, note), StatusFail, vocab.CauseTestsDropped)
}

// outcomeWord says what became of a test at the head.
func outcomeWord(o testresults.Outcome) string {
	switch o {
	case testresults.Skip:
		return "skipped"
	case testresults.Fail:
		return "failing"
	}
	return string(o)
}
