package project

import (
	"errors"
	"fmt"
	"strings"

	"github.com/geas-dev/geas/internal/text"
)

// maxListedTasks bounds how many of a mission's tasks an unknown-task error names.
const maxListedTasks = 20

// maxSuggestDistance is the edit distance within which a task is suggested for an unknown id.
const maxSuggestDistance = 2

// ListTasks returns err with the mission's tasks added when err is a *NoTaskError, so a typed
// id that names no task lists what the mission holds (at most maxListedTasks) and the ids close
// to it ("did you mean depth?"). Any other error, or a mission whose tasks cannot be listed,
// is returned as it is. It reads the tasks directory once, on the error path only.
func (p *Project) ListTasks(err error) error {
	var nt *NoTaskError
	if !errors.As(err, &nt) || nt.listed {
		return err
	}
	ids, lerr := p.Tasks(nt.Mission)
	if lerr != nil {
		return err
	}
	e := *nt
	e.listed, e.Tasks, e.Near = true, ids, nearIDs(nt.Task, ids)
	return &e
}

// listing is the end of a NoTaskError's message that ListTasks adds.
func (e *NoTaskError) listing() string {
	if !e.listed {
		return ""
	}
	if len(e.Tasks) == 0 {
		return "; the mission has no tasks"
	}
	shown := e.Tasks[:min(len(e.Tasks), maxListedTasks)]
	s := "; tasks: " + strings.Join(shown, ", ")
	if n := len(e.Tasks) - len(shown); n > 0 {
		s += fmt.Sprintf(" and %d more", n)
	}
	if len(e.Near) > 0 {
		s += "; did you mean " + strings.Join(e.Near, " or ") + "?"
	}
	return s
}

// nearIDs returns the ids within maxSuggestDistance edits of typed (letter case ignored) or that
// it is a prefix of, at most three, in the order of ids.
func nearIDs(typed string, ids []string) []string {
	t := strings.ToLower(typed)
	var near []string
	for _, id := range ids {
		l := strings.ToLower(id)
		if l == t {
			continue
		}
		if strings.HasPrefix(l, t) || text.EditDistance([]rune(t), []rune(l), maxSuggestDistance) <= maxSuggestDistance {
			near = append(near, id)
			if len(near) == 3 {
				break
			}
		}
	}
	return near
}
