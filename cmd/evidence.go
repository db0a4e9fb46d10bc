package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/gate"
	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/record"
	"github.com/geas-dev/geas/vocab"
)

func newEvidenceCmd(g *globalOptions) *cobra.Command {
	c := groupCmd("evidence", "Write evidence files for a task")
	c.AddCommand(newEvidenceAddCmd(g))
	return c
}

type evidenceAddOptions struct {
	mission, task, agent, role, name, file, data string
}

func newEvidenceAddCmd(g *globalOptions) *cobra.Command {
	var o evidenceAddOptions
	c := &cobra.Command{
		Use:   "add --task T --agent A --role R (--file F | --data JSON)",
		Short: "Write an agent's evidence file, validated",
		Long: `Write tasks/{task}/evidence/{name}.json (name defaults to the agent). agent, task_id and
role come from the flags; a payload that names different values is refused. version "1.0"
and created_at are filled in when absent. The file is validated against the evidence schema
before it is written atomically under the task's lock; an existing file of that name is replaced.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return runEvidenceAdd(c, g, o) },
	}
	c.Flags().StringVar(&o.task, "task", "", "task id")
	c.Flags().StringVar(&o.mission, "mission", "", "mission id (default: mission_id of .geas/state/run.json)")
	c.Flags().StringVar(&o.agent, "agent", "", "agent that wrote the evidence, e.g. qa-engineer")
	c.Flags().StringVar(&o.role, "role", "", "implementer, reviewer, tester or authority")
	c.Flags().StringVar(&o.name, "name", "", "file name without .json (default: the agent)")
	c.Flags().StringVar(&o.file, "file", "", "JSON file holding the evidence (- for standard input)")
	c.Flags().StringVar(&o.data, "data", "", "the evidence as a JSON string")
	return c
}

var roles = []vocab.Role{vocab.Implementer, vocab.Reviewer, vocab.Tester, vocab.Authority}

func runEvidenceAdd(c *cobra.Command, g *globalOptions, o evidenceAddOptions) error {
	if o.agent == "" || o.role == "" {
		return usagef("--agent and --role are required")
	}
	if err := project.ValidateID("agent", o.agent); err != nil {
		return &usageError{err: err}
	}
	if !slices.Contains(roles, vocab.Role(o.role)) {
		return usagef("--role must be one of %v, not %q", roles, o.role)
	}
	if o.name == "" {
		o.name = o.agent
	}
	if err := project.ValidateID("evidence name", o.name); err != nil {
		return &usageError{err: err}
	}
	payload, err := g.readPayload(o.file, o.data)
	if err != nil {
		return err
	}
	t, err := g.openTask(o.mission, o.task)
	if err != nil {
		return err
	}
	defer t.Close()
	obj, err := payloadObject("evidence", payload)
	if err != nil {
		return err
	}
	for key, want := range map[string]string{"agent": o.agent, "task_id": t.task, "role": o.role} {
		if raw, ok := obj[key]; ok {
			var got string
			if json.Unmarshal(raw, &got) != nil || got != want {
				return fmt.Errorf("evidence payload has %s %s but the flags say %q: remove it from the payload or fix the flag", key, raw, want)
			}
		}
		obj[key], _ = json.Marshal(want)
	}
	if _, ok := obj["version"]; !ok {
		obj["version"] = json.RawMessage(`"1.0"`)
	}
	if _, ok := obj["created_at"]; !ok {
		obj["created_at"], _ = json.Marshal(record.Timestamp(time.Now()))
	}
	b, err := marshalOrdered(obj, []string{"version", "agent", "task_id", "role"})
	if err != nil {
		return err
	}
	name := t.dir + "/evidence/" + o.name + ".json"
	if _, err := evidence.Parse(name, b); err != nil {
		return err
	}
	// SPEC §7.3: what the task's latest recorded entry implies is completed first.
	lock, notes, err := gate.Lock(c.Context(), t.ref())
	g.printNotes(t.task, notes)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if err := fsutil.WriteFileAtomic(t.p.Geas, name, b, 0o644); err != nil {
		return err
	}
	out := map[string]string{"mission_id": t.mission, "task_id": t.task, "agent": o.agent, "role": o.role, "file": ".geas/" + name}
	return g.output(out, func(w io.Writer) {
		fmt.Fprintf(w, "wrote .geas/%s\n", name)
	})
}

// marshalOrdered writes obj as indented JSON with the keys of first leading, then the rest sorted.
func marshalOrdered(obj map[string]json.RawMessage, first []string) ([]byte, error) {
	keys := make([]string, 0, len(obj))
	for _, k := range first {
		if _, ok := obj[k]; ok {
			keys = append(keys, k)
		}
	}
	rest := make([]string, 0, len(obj))
	for k := range obj {
		if !slices.Contains(first, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	keys = append(keys, rest...)
	var buf bytes.Buffer
	buf.WriteString("{\n")
	for i, k := range keys {
		kb, _ := json.Marshal(k)
		var vb bytes.Buffer
		if err := json.Indent(&vb, obj[k], "  ", "  "); err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
		fmt.Fprintf(&buf, "  %s: %s", kb, vb.Bytes())
		if i < len(keys)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString("}\n")
	return buf.Bytes(), nil
}
