//go:build !lib_entrycanon

package record

// twinEntryCanon is false only in a build with -tags lib_entrycanon, which puts the library path in
// the twin's place for bench/twins.sh to time; no user can switch it.
const twinEntryCanon = true
