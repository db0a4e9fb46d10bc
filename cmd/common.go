package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/project"
)

// openProject finds the project from -C or the working directory.
func (g *globalOptions) openProject() (*project.Project, error) {
	start := g.dir
	if start == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		start = wd
	}
	return project.Find(start)
}

// taskRef is an opened project plus a resolved mission and task.
type taskRef struct {
	p       *project.Project
	mission string
	task    string
	dir     string // task directory relative to .geas
}

// ref is the task as package gate names it.
func (t *taskRef) ref() gate.Task {
	return gate.Task{Project: t.p, Mission: t.mission, ID: t.task, Dir: t.dir}
}

// openMission validates a --mission value, opens the project, and resolves the mission (the flag,
// else run.json's). The caller closes the project.
func (g *globalOptions) openMission(missionFlag string) (*project.Project, string, error) {
	if missionFlag != "" {
		if err := project.ValidateID("mission", missionFlag); err != nil {
			return nil, "", err
		}
	}
	p, err := g.openProject()
	if err != nil {
		return nil, "", err
	}
	mission, err := p.Mission(missionFlag)
	if err != nil {
		p.Close()
		return nil, "", err
	}
	return p, mission, nil
}

// openTask validates the ids, resolves the mission, and checks that the task exists.
func (g *globalOptions) openTask(missionFlag, task string) (*taskRef, error) {
	if task == "" {
		return nil, usagef("--task is required")
	}
	if err := project.ValidateID("task", task); err != nil {
		return nil, err
	}
	p, mission, err := g.openMission(missionFlag)
	if err != nil {
		return nil, err
	}
	dir, err := p.Task(mission, task)
	if err != nil {
		err = p.ListTasks(err)
		p.Close()
		return nil, err
	}
	return &taskRef{p: p, mission: mission, task: task, dir: dir}, nil
}

// Close releases the project.
func (t *taskRef) Close() error {
	return t.p.Close()
}

// printNotes prints what a command completed or could not write, one line per note.
func (g *globalOptions) printNotes(task string, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(g.stderr, "geas: task %s: %s\n", task, n)
	}
}

// readPayload returns the JSON payload given by exactly one of --file (a path, or - for standard
// input) and --data. The payload file is input data, like a file given to cat, so it is read from
// wherever the caller points; everything geas writes stays inside .geas.
func (g *globalOptions) readPayload(file, data string) ([]byte, error) {
	switch {
	case file != "" && data != "":
		return nil, usagef("give --file or --data, not both")
	case data != "":
		return []byte(data), nil
	case file == "":
		return nil, usagef("--file or --data is required")
	}
	var r io.Reader
	if file == "-" {
		r = g.stdin
	} else {
		f, err := os.Open(file)
		if err != nil {
			return nil, usagef("read payload: %v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, gate.MaxPayloadBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read payload %s: %w", file, err)
	}
	if len(b) > gate.MaxPayloadBytes {
		return nil, fmt.Errorf("payload %s exceeds %d bytes", file, gate.MaxPayloadBytes)
	}
	return b, nil
}

// writeJSON prints v as indented JSON followed by a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// output prints v as JSON with --format json, or calls text otherwise.
func (g *globalOptions) output(v any, text func(w io.Writer)) error {
	if g.format == formatJSON {
		return writeJSON(g.stdout, v)
	}
	text(g.stdout)
	return nil
}
