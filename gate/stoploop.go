package gate

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/record"
)

// StopLoopCap is the most consecutive stops on one unchanged attempt that a stop hook answers
// with a block where the harness has no loop cap of its own (SPEC §9): at the StopLoopCap-th such
// stop the agent may stop, with a message that the task is not verified. 8 is Claude Code's own
// limit (and GitHub Copilot's runaway guard).
const StopLoopCap = 8

// StopOptions are what a harness's stop hook gives the decision besides the task.
type StopOptions struct {
	HookOptions
	// Signal is the harness's "already continuing" signal, when SignalKnown. A harness that sends
	// none (GitHub Copilot's subagentStop) leaves SignalKnown false, and the hook's own count
	// stands in: a stop that follows a held stop on the same attempt is taken as continuing.
	Signal      StopSignal
	SignalKnown bool
	// Stops is the harness's own number of this stop among consecutive stops it continued
	// (Cursor: loop_count + 1), which no agent can edit; 0 when the harness counts none, and the
	// hook keeps its own count in .geas/state/hook-stops/ (stopStreak).
	Stops int
	// Session is the harness's id of the session (Codex's session_id, Copilot's sessionId,
	// Cursor's conversation_id): the count is of consecutive stops in one session, so a session
	// does not inherit the count another left behind.
	Session string
}

// HarnessStop is the stop hook of a harness other than Claude Code (SPEC §9): the decision Claude
// Code's Stop hook makes (HookGate, then DecideStop, or StopCannotRun when the gate cannot run),
// with the loop cap of a harness that has none. A stop that would be held for the StopLoopCap-th
// time in a row on an unchanged attempt (the same verdict on the same head, inputs and rules, or
// the same reason the gate cannot run) is allowed instead, saying the task is not verified; a
// changed attempt is a new count and spends its retry as any run does (SPEC §7.1), so the budget
// still ends a loop that keeps changing things.
func HarnessStop(ctx context.Context, t Task, o StopOptions) StopDecision {
	h, err := HookGate(ctx, t, o.HookOptions)
	attempt := ""
	if err != nil {
		attempt = "cannot-run|" + shortSum(err.Error())
	} else {
		attempt = hookAttempt(h)
	}
	if o.Session != "" {
		attempt = "session " + shortSum(o.Session) + "|" + attempt
	}
	key := record.SigningKey()
	streak, streakErr := readStopStreak(t, key)
	held := 0
	if streakErr == nil && streak.Attempt == attempt {
		held = streak.Held
	}
	s := o.Signal
	if !o.SignalKnown {
		s = StopSignal{Active: held > 0, Name: fmt.Sprintf("the hook's count of stops it held on this attempt: %d", held)}
	}
	var d StopDecision
	if err != nil {
		d = StopCannotRun("task "+t.ID, err, s)
	} else {
		d = DecideStop(t, h, s)
	}
	stop := o.Stops
	if stop <= 0 {
		stop = held + 1
	}
	if d.Block && stop >= StopLoopCap {
		d = stopAllow(fmt.Sprintf("geas gate: task %s is NOT verified: this is stop %d in a row on an unchanged attempt, and the hook "+
			"lets the agent stop at the %dth so that it never loops (the harness has no cap of its own); the work is not done. "+
			"What the gate said:\n%s", t.ID, stop, StopLoopCap, d.Message))
	}
	if o.Stops <= 0 {
		next := stopStreak{Attempt: attempt, Held: held + 1}
		if !d.Block {
			next = stopStreak{}
		}
		if werr := writeStopStreak(t, next, key); werr != nil && d.Block {
			d.Message += fmt.Sprintf("\nNote: the hook could not record its count of held stops (%v), so its loop cap cannot end this loop; "+
				"fix that, or stop and say so.", werr)
		}
	}
	return d
}

// hookAttempt names what a stop is held on: the verdict of a run (or a re-check) on a head, inputs
// and rules, or the state of a task the gate did not run on. A fail the gate repeats from memory
// (SPEC §7.1) has the head, inputs and rules of the run it repeats, so it names the same attempt.
func hookAttempt(h *HookCheck) string {
	if h.Result == nil {
		return "state|" + string(h.State) + "|" + shortSum(h.Why)
	}
	r := h.Result
	return fmt.Sprintf("%s|recheck=%t|%s|%s|%s", r.Verdict, r.Recheck, r.Head, r.InputsSHA256, r.RulesSHA256)
}

func shortSum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:8])
}

// stopStreak is the hook's count of consecutive stops it held on one attempt, for a harness that
// counts none (Codex CLI; GitHub Copilot). It is a file under .geas/state/hook-stops/, one per
// task, which agents can write like every file of the project, so it is trusted for nothing but
// the loop cap: a count raised by hand makes the hook let the agent stop sooner, always with the
// message that the task is not verified, never with a pass (the gate's verdict and the task's
// state are not touched); a count lowered or deleted only makes the hook hold more stops.
// Derived from the history it could not be: a repeated fail and a re-check record nothing. With
// GEAS_GATE_KEY set the hook signs the count (HMAC), and a count whose MAC does not verify counts
// as none: an agent without the key cannot raise it.
type stopStreak struct {
	Attempt string `json:"attempt"`
	Held    int    `json:"held"`
	HMAC    string `json:"hmac,omitempty"`
}

// streakMAC is the MAC of task t's count s under key: it binds the mission, the task, the attempt
// and the count.
func streakMAC(t Task, s stopStreak, key []byte) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "geas hook stop count\x00%s\x00%s\x00%s\x00%d", t.Mission, t.ID, s.Attempt, s.Held)
	return hex.EncodeToString(m.Sum(nil))
}

// stopStreakDir is where the counts live, under .geas.
const stopStreakDir = "state/hook-stops"

// maxStopStreakBytes bounds the count's file: the hook writes well under 200 bytes.
const maxStopStreakBytes = 4096

func stopStreakFile(t Task) string { return stopStreakDir + "/" + t.Mission + "." + t.ID + ".json" }

// readStopStreak reads the task's count; none is the zero count. With a key, a count whose MAC
// does not verify is an error (the caller counts it as none).
func readStopStreak(t Task, key []byte) (stopStreak, error) {
	var s stopStreak
	b, err := fsutil.ReadLimited(t.Project.Geas, stopStreakFile(t), maxStopStreakBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Held < 0 {
		return stopStreak{}, fmt.Errorf("read .geas/%s: not a count the hook wrote", stopStreakFile(t))
	}
	if len(key) > 0 && !hmac.Equal([]byte(s.HMAC), []byte(streakMAC(t, stopStreak{Attempt: s.Attempt, Held: s.Held}, key))) {
		return stopStreak{}, fmt.Errorf("read .geas/%s: its hmac does not verify with GEAS_GATE_KEY: not a count the hook wrote", stopStreakFile(t))
	}
	s.Held = min(s.Held, 1000)
	return s, nil
}

// writeStopStreak records the task's count, signed with key when there is one; the zero count
// removes the file.
func writeStopStreak(t Task, s stopStreak, key []byte) error {
	name := stopStreakFile(t)
	if s == (stopStreak{}) {
		if err := t.Project.Geas.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove .geas/%s: %w", name, err)
		}
		return nil
	}
	if err := t.Project.Geas.MkdirAll(stopStreakDir, 0o755); err != nil {
		return fmt.Errorf("create .geas/%s: %w", stopStreakDir, err)
	}
	// A link planted in place of the directory would take the count elsewhere in .geas (a task's
	// evidence directory, say): the count is written only into a real directory.
	if fi, err := t.Project.Geas.Lstat(stopStreakDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("create .geas/%s: it is not a directory", stopStreakDir)
	}
	if len(key) > 0 {
		s.HMAC = streakMAC(t, s, key)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(t.Project.Geas, name, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write .geas/%s: %w", name, err)
	}
	return nil
}
