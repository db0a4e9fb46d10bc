//go:build lib_events

package record

const twinEvents = false
