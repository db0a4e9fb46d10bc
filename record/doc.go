// Package record owns everything geas writes about a task's progress: the record.json model (the
// agent-written sections, and gate_result/gate_history, which only the gate writes), retry-budget
// accounting read from the history, a transition written into contract.json (the state machine of
// SPEC §8 itself is vocab's), the event log, decision records, and which file is a task's lock
// (LockTask). The durable-write primitives they all share (atomic replace, locks, bounded reads)
// are internal/fsutil's.
//
// It is the ledger of a run (SPEC §7.3): the one writer of what a run leaves. PlanRun derives the
// writes that follow from a run's history entry and result as data (a Plan); Ledger.Commit makes
// the run's commit point and applies that plan, and a crash completion applies the same plan
// through the same Ledger.Apply, which writes only what the files lack.
//
// Three readers have a fast path beside the library path, for the JSON the gate itself writes
// (history lines, its own events, an entry's canonical form): fastEntry (entryscan.go), fastEvent
// (events_read.go) and fastCanonical (entrycanon.go, the entry's members written with
// internal/canon's AppendString and AppendValue), over the scanner of internal/jsonscan. Each
// answers only when it is sure to give what the library path gives, and reports !ok on anything
// else, which then takes the library path; tests check both paths against each other on hostile
// input.
//
// Every path this package opens comes from input (mission and task ids, section names), so every
// file operation goes through an *os.Root for the .geas/ directory, and names are slash-separated
// and relative to it. Nothing here can reach a file outside that root, through ".." or a symlink.
package record
