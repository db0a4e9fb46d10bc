// Package gate is one run of the gate as users see it: it takes the task's lock, completes what
// the task's latest recorded entry implies (Complete, SPEC §7.3), gathers the inputs, evaluates
// them (tiers), writes the commit point and what follows from it. Run gates one task (a finished
// one is re-checked by Recheck), VerifyTask, Verify and Revoke re-check passed tasks and take a
// pass back, GrantRetries and ResetHistory are the authorities' history entries, and All gates
// every task of a mission. The cobra commands, the MCP server, the hooks and the demo each call it
// once; it imports no command-line or MCP code.
package gate
