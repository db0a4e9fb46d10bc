//go:build !lib_entryscan

package record

// twinEntryScan is false only in a build with -tags lib_entryscan, which puts the library path in
// the twin's place for bench/twins.sh to time; no user can switch it.
const twinEntryScan = true
