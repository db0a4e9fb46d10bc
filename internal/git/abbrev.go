package git

import "strings"

// ResolveAbbrev resolves an abbreviated object id (4 to 40 hex digits) to the full SHA of its
// commit, by object id only: unlike Resolve it never reads a ref, so a branch named like the digits
// cannot stand in for the commit they abbreviate. An abbreviation that matches several objects is
// an error, as in git.
func (r *Repo) ResolveAbbrev(prefix string) (string, error) {
	defer r.readingFor("resolving the abbreviated id " + prefix)()
	prefix = strings.ToLower(prefix)
	if len(prefix) < 4 || len(prefix) > 40 || !isHex(prefix) {
		return "", &RevisionError{Rev: prefix, Err: errRevNotFound}
	}
	h, err := r.resolvePrefix(prefix)
	if err != nil {
		return "", &RevisionError{Rev: prefix, Err: err}
	}
	return h.String(), nil
}
