// Package vocab owns the words every other package of geas gate shares: a task's State and the
// edges of the state machine (SPEC §8), the gate Profile, an evidence file's Role, a task's Risk
// level, the Verdict of a run and the CauseCode of each reason it did not pass (SPEC §5). Each is a
// typed string whose values are the ones written in the files, so comparing across packages goes
// through a named constant, not a literal.
//
// vocab is a leaf: it imports only the standard library, so any package of the module may import
// it.
package vocab
