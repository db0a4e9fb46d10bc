//go:build !lib_events

package record

// twinEvents is false only in a build with -tags lib_events, which puts the library path in the
// twin's place for bench/twins.sh to time; no user can switch it.
const twinEvents = true
