//go:build lib_parse

package schemas

const twinParse = false
