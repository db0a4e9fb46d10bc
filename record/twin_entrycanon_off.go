//go:build lib_entrycanon

package record

const twinEntryCanon = false
