//go:build lib_canonfast

package canon

const twinCanonFast = false
