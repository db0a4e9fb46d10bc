//go:build !unix

package testresults

const (
	oNoFollow = 0
	oNonBlock = 0
)
