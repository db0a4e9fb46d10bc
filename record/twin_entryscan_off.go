//go:build lib_entryscan

package record

const twinEntryScan = false
