//go:build !linux

package tiers

// ancestors returns nothing where there is no /proc: planExecution then counts a key in the
// environment as exposed whoever runs the code.
func ancestors() []int { return nil }
