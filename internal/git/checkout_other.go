//go:build !linux && !darwin

package git

import "os"

// openCheckoutDir returns the top of a checkout being written: the portable os.Root directory.
func openCheckoutDir(root *os.Root) (ckDir, error) {
	sub, err := root.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	return rootDir{sub}, nil
}
