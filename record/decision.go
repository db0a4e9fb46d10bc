package record

import (
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/schemas"
)

// idPattern is the shape of mission, task and artifact ids (SPEC §3): ids become path elements, so
// nothing else is allowed.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// WriteDecision validates a decision record and writes it to the mission's decisions directory,
// named by its artifact_id: decisions/pending/{id}.json while its status is "pending" (an
// escalation waiting for an authority), decisions/{id}.json otherwise. It returns the name written,
// relative to root. A decision is never overwritten: if the file exists the error wraps
// fs.ErrExist, and the check is atomic with the write, so two writers cannot both win.
func WriteDecision(root *os.Root, mission string, data []byte) (name string, err error) {
	if !idPattern.MatchString(mission) {
		return "", fmt.Errorf("write decision: mission id %q must match %s", mission, idPattern)
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
	if !idPattern.MatchString(id) {
		return "", fmt.Errorf("write decision: artifact_id %q must match %s (it names the file)", id, idPattern)
	}
	dir := path.Join("missions", mission, "decisions")
	if status == "pending" {
		dir = path.Join(dir, "pending")
	}
	name = path.Join(dir, id+".json")
	if err := fsutil.CreateFileAtomic(root, name, data, 0o644); err != nil {
		return "", fmt.Errorf("write decision: %w", err)
	}
	return name, nil
}
