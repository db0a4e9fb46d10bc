package tiers

// projectPrefix is the project root relative to the repository's top directory, with a trailing
// slash ("" when they are the same directory).
// A project root that is not inside the top (a symbolic link to another repository's directory)
// is "" here; projectPaths says that nothing is inside it.
func (pass *Pass) projectPrefix() string {
	return pass.projectPaths().prefix
}

// afterCode compares the working tree (or the isolated checkout) with the head after code ran;
// after names what ran. A check means the code changed the tree: the caller records after as
// what changed it.
func afterCode(pass *Pass, tier int, name, text, after string) *Check {
	if pass.work != nil {
		return checkoutCheck(pass, tier, name, text, after)
	}
	return worktreeCheck(pass, tier, name, text, pass.headName(), after)
}
