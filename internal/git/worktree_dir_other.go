//go:build !linux

package git

// openDir opens the directory abs for the working-tree walk.
func openDir(abs string) (dirHandle, error) { return openFileDir(abs) }
