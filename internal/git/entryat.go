package git

// EntryAt returns the entry at name (slash-separated, relative to the root of the repository's
// tree, byte for byte as git stores it: case-sensitive) in commit (a full SHA) as one side of a
// FileChange: its kind and object id, or the zero FileSide when the tree has nothing there. Only
// the trees on the way to name are read (and verified), so looking up a few paths in a commit
// costs no diff. Two FileSides are equal exactly when the trees hold the same entry there: the
// same kind (a file, an executable, a symbolic link, a submodule) and the same object.
func (r *Repo) EntryAt(commit, name string) (FileSide, error) {
	defer r.readingFor(name + " at " + short12(commit))()
	mode, h, err := r.entryAt(commit, name)
	if refused := r.refused.err(); refused != nil {
		return FileSide{}, refused
	}
	if err != nil || mode == 0 {
		return FileSide{}, err
	}
	return FileSide{Kind: kindOf(mode), ID: h.String()}, nil
}
