package project

import (
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/geas-dev/geas/internal/fsutil"
)

// NoMissionError is ErrNoMission with what .geas/missions/ holds, so the refusal names the
// missions to choose from (or says there are none).
type NoMissionError struct {
	Missions []string // the valid mission directories found
	Others   []string // entries of .geas/missions/ that are not mission directories
}

func (e *NoMissionError) Error() string {
	var what string
	switch len(e.Missions) {
	case 0:
		what = ".geas/missions/ holds no mission; geas init --mission M makes one"
	case 1:
		what = ".geas/missions/ holds mission " + e.Missions[0]
	default:
		what = fmt.Sprintf(".geas/missions/ holds %d missions: %s", len(e.Missions), strings.Join(e.Missions, ", "))
	}
	if len(e.Others) > 0 {
		what += fmt.Sprintf(", and entries that are not mission directories: %s", strings.Join(quoteAll(e.Others), ", "))
	}
	return fmt.Sprintf("%v (%s)", ErrNoMission, what)
}

func (e *NoMissionError) Unwrap() error { return ErrNoMission }

// Missions lists the mission ids of the project: the directories under .geas/missions/ whose name
// is a valid id, sorted. Symbolic links, files and other names are left out: a mission is a
// directory of its own, as a task is. A project without .geas/missions/ has no missions.
func (p *Project) Missions() ([]string, error) {
	ids, _, err := p.missionEntries()
	return ids, err
}

// missionEntries lists .geas/missions/: the valid mission directories, and the names of the other
// entries (symbolic links, files, bad names), hidden regular files such as .DS_Store left out.
func (p *Project) missionEntries() (ids, others []string, err error) {
	f, err := fsutil.OpenDir(p.Geas, "missions") // a named pipe is refused, not waited on
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list missions: %w", err)
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, nil, fmt.Errorf("list missions: %w", err)
	}
	for _, e := range entries {
		switch {
		case e.Type().IsDir() && IsID(e.Name()):
			ids = append(ids, e.Name())
		case e.Type().IsRegular() && strings.HasPrefix(e.Name(), "."):
		default:
			others = append(others, e.Name())
		}
	}
	sort.Strings(ids)
	sort.Strings(others)
	return ids, others, nil
}

// onlyMission is the mission when .geas/missions/ holds exactly one mission directory and nothing
// else (SPEC §9): a symbolic link or a file beside it might be the mission meant, so then there is
// no default. Otherwise a *NoMissionError naming what it holds.
func (p *Project) onlyMission() (string, error) {
	ids, others, err := p.missionEntries()
	if err != nil {
		return "", err
	}
	if len(ids) == 1 && len(others) == 0 {
		return ids[0], nil
	}
	return "", &NoMissionError{Missions: ids, Others: others}
}

func quoteAll(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = fmt.Sprintf("%q", v)
	}
	return out
}
