package vocab

import (
	"fmt"
	"regexp"
)

// IDPattern is the shape of mission, task and artifact ids (SPEC §3): ids become path elements, so
// nothing else is allowed. The grammar is shared vocabulary: the contract validates the task id it
// names with it, the project finds mission and task directories by it (project.ValidateID, the
// entry point the commands use).
const IDPattern = `^[A-Za-z0-9_-]+$`

var idPattern = regexp.MustCompile(IDPattern)

// IsID reports whether s has the shape of an id (IDPattern).
func IsID(s string) bool { return idPattern.MatchString(s) }

// InvalidIDError reports a mission or task id outside ^[A-Za-z0-9_-]+$.
type InvalidIDError struct {
	What string // "task", "mission"
	ID   string
}

func (e *InvalidIDError) Error() string {
	if e.ID == "" {
		return fmt.Sprintf("%s id is empty", e.What)
	}
	return fmt.Sprintf("invalid %s id %q: ids match ^[A-Za-z0-9_-]+$", e.What, e.ID)
}

// ValidateID checks that id is a valid mission or task id; what names it in the error.
func ValidateID(what, id string) error {
	if !IsID(id) {
		return &InvalidIDError{What: what, ID: id}
	}
	return nil
}
