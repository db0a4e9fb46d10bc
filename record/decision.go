package record

import (
	"errors"
	"fmt"
	"os"
	"path"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/project"
	"github.com/geas-dev/geas/schemas"
)

// WriteDecision validates a decision record and writes it to the mission's decisions directory,
// named by its artifact_id: decisions/pending/{id}.json while its status is "pending" (an
// escalation waiting for an authority), decisions/{id}.json otherwise. It returns the name written,
// relative to root. A decision is never overwritten: if the file exists the error wraps
// fs.ErrExist, and the check is atomic with the write, so two writers cannot both win.
func WriteDecision(root *os.Root, mission string, data []byte) (name string, err error) {
	if !project.IsID(mission) {
		return "", fmt.Errorf("write decision: mission id %q must match %s", mission, project.IDPattern)
	}
	var read struct {
		ArtifactID string `json:"artifact_id"`
		Status     string `json:"status"`
	}
	// What is read is what was checked: "STATUS" next to "status" is refused (SPEC §2 invariant 8).
	if err := schemas.DecodeExact(schemas.Decision, "decision", data, &read); err != nil {
		return "", err
	}
	f, err := objectFields(data)
	if err != nil {
		return "", fmt.Errorf("write decision: %w", err)
	}
	var id, status string
	if err := errors.Join(field(f, "artifact_id", &id), field(f, "status", &status)); err != nil {
		return "", fmt.Errorf("write decision: %w", err)
	}
	if !project.IsID(id) {
		return "", fmt.Errorf("write decision: artifact_id %q must match %s (it names the file)", id, project.IDPattern)
	}
	name = path.Join("missions", mission, "decisions", id+".json")
	if status == "pending" {
		name = PendingDecisionFile(mission, id)
	}
	if err := fsutil.CreateFileAtomic(root, name, data, 0o644); err != nil {
		return "", fmt.Errorf("write decision: %w", err)
	}
	return name, nil
}
