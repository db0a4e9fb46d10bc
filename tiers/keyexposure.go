package tiers

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/internal/proc"
	"github.com/geas-dev/geas/internal/text"
	"github.com/geas-dev/geas/policy"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

// The checks a run makes before it runs any code (SPEC §9: the processes the gate runs never see
// the signing key). A refusal by either is decided before tier 0 and ends the run there.
const (
	checkKeyExposure = "key_exposure"
	checkEvalUser    = "eval_user"
)

const (
	keyExposureText = "the eval commands and script detectors cannot read the signing key"
	evalUserText    = "the policy's eval_user can run the eval commands and script detectors"
	// probeTimeout bounds the probe run as the eval user; a probe that does not answer in time
	// proves nothing, so the key counts as exposed.
	probeTimeout = 10 * time.Second
)

// execution is how a run may run code: the user its processes run as (nil: the gate's own), and
// what the checks before tier 0 found.
type execution struct {
	runAs    *proc.User
	checks   []Check
	refused  bool // a check refused the run: nothing runs and nothing is recorded
	accepted bool // the key is exposed and the policy accepts it
}

// runsCode reports whether a run of this contract may start processes: eval commands (tier 1
// runs them for implementation_change) or script detectors. A run that runs no code exposes
// nothing.
func runsCode(c *contract.Contract) bool {
	if c == nil {
		return false
	}
	if c.GateProfile == vocab.ImplementationChange && len(c.EvalCommands) > 0 {
		return true
	}
	for _, cr := range c.AcceptanceCriteria {
		if cr.Check != nil && cr.Check.Type == contract.DetectScript {
			return true
		}
	}
	return false
}

// planExecution decides, from the policy and the gate's environment, whether the run may run code
// and as whom (SPEC §9). The signing key must stay out of reach of the code the agents wrote:
//
//   - a key in the gate's environment (GEAS_GATE_KEY) is in /proc/PID/environ of the processes
//     that started the gate, which every process of their user can read (ps eww on macOS): code
//     run as the gate's user reads it, on every platform. Run as another user (eval_user), it
//     cannot, which the gate confirms on Linux by trying, as that user, to open the environment of
//     each of its ancestors; elsewhere it cannot confirm it, and the key counts as exposed;
//   - a key file (GEAS_GATE_KEY_FILE) is exposed when the eval user can open it (the gate tries,
//     as that user); code run as the gate's own user always can;
//   - with no key there is nothing to protect, and a run that runs no code exposes nothing.
//
// An exposed key refuses the run (error, key_exposed) unless the policy's key_exposure is accept;
// then every run says so in a warning. An eval_user that cannot be used (unknown, root, a gate
// not started as root, a project that user cannot read) refuses the run too (eval_unstartable):
// running the code as the gate's user instead would expose what eval_user was set to protect.
func planExecution(ctx context.Context, pass *Pass) execution {
	var ex execution
	if !runsCode(pass.in.Contract) {
		return ex // nothing runs, nothing is exposed
	}
	pol, broken := pass.in.Policy, ""
	if pass.in.PolicyErr != nil {
		// Tier 0 stops on the policy (policy_invalid), but --keep-going would run the code: a
		// policy that does not parse neither names an eval_user nor accepts an exposure.
		pol, broken = policy.Default(), " (the policy does not parse, so neither its eval_user nor its key_exposure is used)"
	}
	src, keyPath := record.SigningKeySource()
	var probe probeResult
	if pol.EvalUser != "" {
		u, err := evalUser(pol.EvalUser)
		if err != nil {
			return ex.refuse(failCheck(0, checkEvalUser, evalUserText, err.Error(), StatusError, vocab.CauseEvalUnstartable))
		}
		if u != nil {
			ex.runAs = u
			probe = runProbe(ctx, pass, u, src, keyPath)
			if probe.err != "" {
				return ex.refuse(failCheck(0, checkEvalUser, evalUserText, fmt.Sprintf("the probe run as eval_user %s could not tell what it can read: %s; nothing was run", u, probe.err), StatusError, vocab.CauseEvalUnstartable))
			}
			if probe.dir != "" {
				return ex.refuse(failCheck(0, checkEvalUser, evalUserText, probe.dir, StatusError, vocab.CauseEvalUnstartable))
			}
			ex.checks = append(ex.checks, infoCheck(checkEvalUser, evalUserText, fmt.Sprintf("eval commands and script detectors run as %s, with its HOME %s; the gate runs as uid %d", u, u.Home, os.Geteuid())))
		}
	}
	if src == record.KeyNone {
		return ex
	}
	exposed := exposure(src, keyPath, ex.runAs, probe)
	if exposed == "" {
		ex.checks = append(ex.checks, infoCheck(checkKeyExposure, keyExposureText, protection(src, keyPath, ex.runAs)))
		return ex
	}
	if pol.KeyExposure == policy.KeyExposureAccept {
		ex.accepted = true
		ex.checks = append(ex.checks, warnCheck(0, checkKeyExposure, keyExposureText,
			"THE SIGNING KEY IS EXPOSED to the eval commands and script detectors, and the policy accepts it (key_exposure: accept): "+exposed+
				"; code that reads it can sign approvals, grants and history entries", vocab.CauseKeyExposed))
		return ex
	}
	return ex.refuse(failCheck(0, checkKeyExposure, keyExposureText, exposed+broken+
		"; the run is refused before anything runs, records nothing and spends no retry. Give the key in a file the eval commands cannot read "+
		"(GEAS_GATE_KEY_FILE, with eval_user in .geas/gate-policy.json for a gate started as root), or accept the exposure (key_exposure: accept)",
		StatusError, vocab.CauseKeyExposed))
}

// refuse ends the plan with check c, which refuses the run.
func (ex execution) refuse(c Check) execution {
	ex.checks = append(ex.checks, c)
	ex.refused = true
	ex.runAs = nil
	return ex
}

// infoCheck is a check that says how the run is protected: it passes, holds nothing and is not
// counted.
func infoCheck(name, text, evidence string) Check {
	return Check{Name: name, Tier: 0, Text: text, Status: StatusPass, Passed: true, Evidence: evidence}
}

// exposure says how the key can be read by the code the run starts, or "" when it cannot.
func exposure(src record.KeySource, keyPath string, as *proc.User, probe probeResult) string {
	self := fmt.Sprintf("uid %d", os.Geteuid())
	switch {
	case src == record.KeyEnv && as == nil:
		return fmt.Sprintf("%s is in the environment the gate was started with, and the eval commands run as the gate's own user (%s), "+
			"who can read it in the environment of the processes that started the gate (/proc/PID/environ, ps eww)", record.SigningKeyEnv, self)
	case src == record.KeyEnv && runtime.GOOS != "linux":
		return fmt.Sprintf("%s is in the environment the gate was started with; on %s the gate cannot confirm that eval_user %s cannot read the environment of the processes that started it",
			record.SigningKeyEnv, runtime.GOOS, as)
	case src == record.KeyEnv && len(probe.readable) > 0:
		return fmt.Sprintf("%s is in the environment the gate was started with, and eval_user %s can read the environment of the gate's ancestors %s",
			record.SigningKeyEnv, as, text.JoinLimited(probe.readable, 10))
	case src == record.KeyFile && as == nil:
		return fmt.Sprintf("the key file %s (%s) is readable by the gate's own user (%s), whom the eval commands run as", keyPath, record.SigningKeyFileEnv, self)
	case src == record.KeyFile && len(probe.readable) > 0:
		return fmt.Sprintf("the key file %s (%s) is readable by eval_user %s", keyPath, record.SigningKeyFileEnv, as)
	}
	return ""
}

// protection says why the key is out of reach of the code the run starts.
func protection(src record.KeySource, keyPath string, as *proc.User) string {
	if src == record.KeyEnv {
		return fmt.Sprintf("%s is in the gate's environment; the eval commands run as eval_user %s, who could open the environment of none of the gate's ancestors (tried as that user), and the gate's own copy is wiped", record.SigningKeyEnv, as)
	}
	return fmt.Sprintf("the key is read from %s (%s); the eval commands run as eval_user %s, who could not open it (tried as that user)", keyPath, record.SigningKeyFileEnv, as)
}

// evalUser looks the policy's eval_user up (a name, or a numeric uid). It returns nil when that
// user is the gate's own (nothing to switch to), and an error when the user cannot be used: it is
// unknown, it is root (who reads every process's memory and every file), this platform cannot
// start a process as another user, or the gate is not root and so cannot either.
func evalUser(name string) (*proc.User, error) {
	if runtime.GOOS == "windows" {
		return nil, fmt.Errorf("eval_user %q: eval commands cannot be run as another user on Windows; nothing was run", name)
	}
	u, err := user.Lookup(name)
	if err != nil {
		if _, numErr := strconv.ParseUint(name, 10, 32); numErr == nil {
			u, err = user.LookupId(name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("eval_user %q: no such user (%v); nothing was run", name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("eval_user %q: uid %q or gid %q is not a number; nothing was run", name, u.Uid, u.Gid)
	}
	pu := &proc.User{Name: u.Username, UID: uint32(uid), GID: uint32(gid), Home: u.HomeDir}
	switch euid := os.Geteuid(); {
	case uid == 0:
		return nil, fmt.Errorf("eval_user %s is root, who can read every file and every process's memory, the gate's included; name an unprivileged user; nothing was run", pu)
	case int(uid) == euid:
		return nil, nil
	case euid != 0:
		return nil, fmt.Errorf("eval_user %s needs a gate started as root, to start processes as that user; the gate runs as uid %d; nothing was run", pu, euid)
	}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil && g != 0 {
				pu.Groups = append(pu.Groups, uint32(g))
			}
		}
	}
	return pu, nil
}

// probeResult is what the probe run as the eval user found.
type probeResult struct {
	readable []string // the key file, or the ancestors' environments, that user could open
	dir      string   // why that user cannot use the project directory; "" when it can
	err      string   // the probe could not run or did not finish
}

// probeScript runs as the eval user: it says whether it can enter and list $1 (the project
// directory, or "" for none), then, for each further argument, whether it can open it for
// reading, by index (a path may hold any byte), and ends with "end" so that a probe cut short is
// not taken for one that found nothing.
const probeScript = `d=$1; shift
if [ -n "$d" ]; then (cd "$d" && : <.) 2>/dev/null || echo nodir; fi
i=0
for f do i=$((i+1)); if (: <"$f") 2>/dev/null; then echo "read $i"; fi; done
echo end`

// runProbe tries, as the eval user, what the plan depends on: that it can enter the project
// directory (unless the run uses a checkout of its own, which the gate gives to that user), and
// which of the paths the key could be read from it can open: the key file, or the environment of
// each of the gate's ancestors (Linux).
func runProbe(ctx context.Context, pass *Pass, u *proc.User, src record.KeySource, keyPath string) probeResult {
	dir := pass.in.ProjectDir
	if pass.in.Policy.EvalCheckout == policy.EvalCheckoutIsolated || pass.opts.Verify {
		dir = ""
	}
	var paths []string
	switch src {
	case record.KeyFile:
		paths = []string{keyPath}
	case record.KeyEnv:
		for _, pid := range ancestors() {
			paths = append(paths, "/proc/"+strconv.Itoa(pid)+"/environ")
		}
	}
	res := pass.env.Start(ctx, proc.Spec{
		Label: "eval_user probe", Argv: append([]string{"sh", "-c", probeScript, "sh", dir}, paths...),
		Dir: "/", Timeout: probeTimeout, TailBytes: 64 << 10, RunAs: u,
		Withhold: []string{record.SigningKeyEnv, record.SigningKeyFileEnv},
	})
	var out probeResult
	lines := strings.Split(strings.TrimSpace(res.OutputTail), "\n")
	if res.Status != proc.StatusPass || len(lines) == 0 || lines[len(lines)-1] != "end" {
		why := res.Error
		if why == "" {
			why = fmt.Sprintf("it printed %q", lastOutput(res.OutputTail))
		}
		out.err = why
		return out
	}
	for _, l := range lines[:len(lines)-1] {
		if l == "nodir" {
			out.dir = fmt.Sprintf("eval_user %s cannot enter and list the project directory %s; the gate changes no permissions: make the project readable by that user "+
				"(or use eval_checkout: isolated, whose checkout the gate gives to that user); nothing was run", u, dir)
			continue
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(l, "read ")); err == nil && n >= 1 && n <= len(paths) {
			out.readable = append(out.readable, paths[n-1])
		}
	}
	return out
}

// lastOutput is the last 200 bytes of a probe's output, for an error.
func lastOutput(s string) string {
	if len(s) > 200 {
		return s[len(s)-200:]
	}
	return s
}
