//go:build !lib_parse

package schemas

// twinParse is false only in a build with -tags lib_parse, which puts the library path in the
// twin's place for bench/twins.sh to time; no user can switch it.
const twinParse = true
