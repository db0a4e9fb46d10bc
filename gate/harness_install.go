package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/geas-dev/geas/internal/fsutil"
	"github.com/geas-dev/geas/internal/jsonobj"
	"github.com/geas-dev/geas/schemas"
)

// maxHookConfigSize bounds the read of a harness's configuration file: settings files are a few
// KiB; a larger one is not one geas rewrites.
const maxHookConfigSize = 4 << 20

// Statuses of an installed hook configuration file (HookFile.Status).
const (
	HookFileCreated   = "created"
	HookFileMerged    = "merged"
	HookFileUnchanged = "unchanged"
)

// HookFile is what InstallHooks did to one harness's configuration file.
type HookFile struct {
	Harness string `json:"harness"`
	// Path is the file, slash-separated, relative to the project root.
	Path string `json:"path"`
	// Status is created, merged (entries added to an existing file) or unchanged.
	Status string `json:"status"`
	// Added and Present name each entry as "EVENT: COMMAND": added now, or already there (an
	// entry that runs the same geas hook, perhaps in another file the harness reads).
	Added   []string `json:"added"`
	Present []string `json:"present"`
	Notes   []string `json:"notes"`
}

// InitWithHooks is Init followed by InstallHooks for each harness: the hook configurations are
// read and merged first, so a configuration file InstallHooks refuses leaves the project as it was.
func InitWithHooks(dir, mission string, harnesses []string) (*Initialized, error) {
	plans, err := planHooks(dir, harnesses)
	if err != nil {
		return nil, err
	}
	res, err := Init(dir, mission)
	if err != nil {
		return nil, err
	}
	if len(plans) > 0 {
		if res.Hooks, err = writeHooks(dir, plans); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// InstallHooks writes or merges the hook configuration of each harness (one of Harnesses) in
// the project directory dir, so that the harness runs `geas hook ...` when its agent stops. An
// existing file keeps every other key and entry, in its order; an entry that already runs the same
// geas hook is not added again, so a second run changes nothing. A file that is not plain JSON
// (comments, trailing commas, duplicate keys), has a member of the wrong type, is a symbolic link
// or sits under one is refused with its path, and nothing is written for any harness.
func InstallHooks(dir string, harnesses []string) ([]HookFile, error) {
	plans, err := planHooks(dir, harnesses)
	if err != nil {
		return nil, err
	}
	return writeHooks(dir, plans)
}

// hookPlan is one file's merge, computed before anything is written.
type hookPlan struct {
	file HookFile
	data []byte // nil when unchanged
	perm fs.FileMode
}

func planHooks(dir string, harnesses []string) ([]hookPlan, error) {
	if len(harnesses) == 0 {
		return nil, nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var plans []hookPlan
	seen := map[string]bool{}
	for _, h := range harnesses {
		if !slices.Contains(Harnesses(), h) {
			return nil, &InputError{Err: fmt.Errorf("unknown harness %q: want one of %s", h, strings.Join(Harnesses(), ", "))}
		}
		if seen[h] {
			continue
		}
		seen[h] = true
		p, err := planHook(root, harnessSpecs(h))
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

func writeHooks(dir string, plans []hookPlan) ([]HookFile, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	out := make([]HookFile, 0, len(plans))
	for _, p := range plans {
		if p.data != nil {
			if err := writeHookFile(root, p); err != nil {
				return nil, err
			}
		}
		out = append(out, p.file)
	}
	return out, nil
}

// writeHookFile replaces the file atomically (temporary file and rename) with its old mode.
func writeHookFile(root *os.Root, p hookPlan) error {
	name := p.file.Path
	if err := checkHookPath(root, name); err != nil { // again: it may have changed since the plan
		return err
	}
	if err := fsutil.WriteFileAtomic(root, name, p.data, p.perm); err != nil {
		return err
	}
	// The umask may have taken bits the old file had; put them back (never more than it had).
	if fi, err := root.Lstat(name); err == nil && fi.Mode().Perm() != p.perm {
		if err := root.Chmod(name, p.perm); err != nil {
			return fmt.Errorf("%s: keep mode %v: %w", name, p.perm, err)
		}
	}
	return nil
}

// planHook reads the harness's file (when it exists) and merges the entries of spec into it.
func planHook(root *os.Root, spec harnessSpec) (hookPlan, error) {
	p := hookPlan{file: HookFile{Harness: spec.name, Path: spec.file, Added: []string{}, Present: []string{}, Notes: []string{}}, perm: 0o644}
	if err := checkHookPath(root, spec.file); err != nil {
		return p, err
	}
	var data []byte
	fi, err := root.Lstat(spec.file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.file.Status = HookFileCreated
	case err != nil:
		return p, err
	default:
		p.perm = fi.Mode().Perm()
		if data, err = fsutil.ReadLimited(root, spec.file, maxHookConfigSize); err != nil {
			return p, refuseHookFile(spec.file, err.Error())
		}
	}
	var elsewhere map[string]string
	if spec.otherFiles {
		elsewhere, p.file.Notes = presentInOtherFiles(root, spec)
	}
	merged, err := mergeHooks(spec, data, &p.file, elsewhere)
	if err != nil {
		return p, refuseHookFile(spec.file, err.Error())
	}
	if len(p.file.Added) == 0 {
		p.file.Status = HookFileUnchanged
	} else {
		p.data = merged
		if data != nil {
			p.file.Status = HookFileMerged
		}
	}
	if spec.name == HarnessClaude {
		p.file.Notes = append(p.file.Notes, claudeNotes(data)...)
	}
	p.file.Notes = append(p.file.Notes, spec.notes...)
	return p, nil
}

func refuseHookFile(name, why string) error {
	return fmt.Errorf("%s: %s: nothing written (geas init merges only plain JSON and never drops what a file holds; fix the file, or add the geas hook entries by hand as docs/agents.md shows)", name, why)
}

// checkHookPath refuses a configuration file that is a symbolic link or anything but a regular
// file, and a directory on its way that is a link or not a directory: a link could point outside
// the project or at the gate's own files under .geas/, and geas init writes neither.
func checkHookPath(root *os.Root, name string) error {
	parts := strings.Split(name, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		fi, err := root.Lstat(sub)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		last := i == len(parts)-1
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link: geas init does not write through it (it could point outside the project, or at the gate's own files); nothing written", sub)
		case !last && !fi.IsDir():
			return fmt.Errorf("%s is not a directory (%s): nothing written", sub, fsutil.ModeName(fi.Mode()))
		case last && !fi.Mode().IsRegular():
			return fmt.Errorf("%s is not a regular file (%s): nothing written", sub, fsutil.ModeName(fi.Mode()))
		}
	}
	return nil
}

// mergeHooks adds spec's entries to the configuration data (nil: a new file) and returns the new
// file, recording in f what was added and what was there. elsewhere maps an event to the other
// file that already holds our entry for it.
func mergeHooks(spec harnessSpec, data []byte, f *HookFile, elsewhere map[string]string) ([]byte, error) {
	var top []jsonobj.Member
	indent := "  "
	if data != nil {
		if len(bytes.TrimSpace(data)) == 0 {
			return nil, errors.New("is empty, not a JSON object")
		}
		if err := noDuplicateKeys(data); err != nil {
			return nil, err
		}
		var err error
		if top, err = jsonobj.Decode(data); err != nil {
			return nil, fmt.Errorf("not a plain JSON object (%v)", err)
		}
		indent = indentOf(data)
	}
	if spec.version {
		if raw, ok := member(top, "version"); ok {
			if string(bytes.TrimSpace(raw)) != "1" {
				return nil, fmt.Errorf(`"version" is %s: geas knows version 1 of this file only`, raw)
			}
		} else {
			top = append([]jsonobj.Member{{Key: "version", Value: json.RawMessage("1")}}, top...)
		}
	}
	var hooks []jsonobj.Member
	if raw, ok := member(top, "hooks"); ok {
		var err error
		if hooks, err = jsonobj.Decode(raw); err != nil {
			return nil, fmt.Errorf(`"hooks" is not a JSON object (%v)`, err)
		}
	}
	for _, e := range spec.entries {
		label := e.event + ": " + geasHook(e.sub)
		if where, ok := elsewhere[e.event]; ok {
			f.Present = append(f.Present, label+" (in "+where+")")
			continue
		}
		var entries []json.RawMessage
		if raw, ok := member(hooks, e.event); ok {
			if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
				return nil, fmt.Errorf(`"hooks"."%s" is not an array`, e.event)
			}
		}
		found, err := holdsHook(spec, e, entries, f)
		if err != nil {
			return nil, err
		}
		if found {
			f.Present = append(f.Present, label)
			continue
		}
		entries = append(entries, e.entry)
		hooks = jsonobj.Set(hooks, e.event, arrayJSON(entries...))
		f.Added = append(f.Added, label)
	}
	top = jsonobj.Set(top, "hooks", jsonobj.Compact(hooks))
	var out bytes.Buffer
	if err := json.Indent(&out, jsonobj.Compact(top), "", indent); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// holdsHook reports whether one of an event's entries already runs `geas hook e.sub`, refusing
// an entry of the wrong type; such an entry with a shorter timeout than ours gets a note in f.
func holdsHook(spec harnessSpec, e hookEntry, entries []json.RawMessage, f *HookFile) (bool, error) {
	found := false
	ours := groupMatcher(e.entry)
	for i, raw := range entries {
		where := fmt.Sprintf(`"hooks"."%s"[%d]`, e.event, i)
		handlers := []json.RawMessage{raw}
		sameMatcher := true
		if spec.nested {
			var group map[string]json.RawMessage
			if err := json.Unmarshal(raw, &group); err != nil || group == nil {
				return false, fmt.Errorf("%s is not an object", where)
			}
			// A group with another matcher runs our hook for other tools (an older install's
			// PreToolUse matcher, without Bash): it does not stand for ours, which is added.
			sameMatcher = groupMatcher(raw) == ours
			handlers = nil
			if h, ok := group["hooks"]; ok {
				if err := json.Unmarshal(h, &handlers); err != nil || handlers == nil {
					return false, fmt.Errorf(`%s."hooks" is not an array`, where)
				}
			}
		}
		for j, h := range handlers {
			hw := where
			if spec.nested {
				hw = fmt.Sprintf(`%s."hooks"[%d]`, where, j)
			}
			handler, ok, err := runsGeasHook(spec, h, e.sub, hw)
			if err != nil {
				return false, err
			}
			if ok && !sameMatcher {
				f.Notes = append(f.Notes, fmt.Sprintf("%s runs geas hook %s with matcher %q, not %q: geas's entry is added beside it; remove the old one", where, e.sub, groupMatcher(entries[i]), ours))
				continue
			}
			if ok {
				if t := handlerTimeout(spec, handler); t > 0 && t < e.timeout {
					f.Notes = append(f.Notes, fmt.Sprintf("%s runs geas hook %s with a timeout of %d s, under %d s: the harness lets the agent go on when it kills the hook; raise it", hw, e.sub, t, e.timeout))
				}
			}
			found = found || ok
		}
	}
	return found, nil
}

// groupMatcher is the "matcher" of a matcher group ("" when it has none or it is not a string).
func groupMatcher(group json.RawMessage) string {
	var g map[string]json.RawMessage // keys exact: encoding/json would take "Matcher" for it
	var m string
	if json.Unmarshal(group, &g) == nil {
		_ = json.Unmarshal(g["matcher"], &m)
	}
	return m
}

// runsGeasHook reports whether the handler h runs `geas hook sub` as the hook geas installs
// would: a command hook (not async, no `if` filter) whose command is the geas launcher, `hook`,
// sub and nothing but plain flags. A command that merely mentions it (`echo geas hook ...`,
// `geas hook ... > /dev/null`, `... || true`) is not ours, and ours is added beside it.
func runsGeasHook(spec harnessSpec, h json.RawMessage, sub, where string) (map[string]any, bool, error) {
	var handler map[string]any
	if err := json.Unmarshal(h, &handler); err != nil || handler == nil {
		return nil, false, fmt.Errorf("%s is not an object", where)
	}
	if t, ok := handler["type"]; ok && t != "command" {
		return handler, false, nil
	}
	if a, ok := handler["async"]; ok && a != false {
		return handler, false, nil
	}
	if _, ok := handler["if"]; ok {
		return handler, false, nil
	}
	for _, k := range spec.commandKeys {
		v, ok := handler[k]
		if !ok {
			continue
		}
		s, isString := v.(string)
		if !isString {
			return nil, false, fmt.Errorf(`%s."%s" is not a string`, where, k)
		}
		if isGeasHookCommand(s, sub) {
			return handler, true, nil
		}
	}
	return handler, false, nil
}

// handlerTimeout is a handler's timeout in seconds: its own, else the harness's default (0 when
// that is not documented, or the value is not a number).
func handlerTimeout(spec harnessSpec, handler map[string]any) int {
	for _, k := range spec.timeoutKeys {
		if v, ok := handler[k]; ok {
			n, isNumber := v.(float64)
			if !isNumber {
				return 0
			}
			return int(n)
		}
	}
	return spec.defaultTimeout
}

// plainArg is a command-line word without shell syntax: no redirection, pipe, list, comment,
// substitution or glob.
var plainArg = regexp.MustCompile(`^[A-Za-z0-9_./:=@+,-]+$`)

// hookFlags are the flags of the geas hook commands that an installed entry may carry: any other
// word (an unknown flag, a stray argument) would make the hook fail at every stop, and a hook that
// fails lets the agent stop.
var hookFlags = []string{"--task", "--mission", "--timeout"}

// isGeasHookCommand reports whether command runs `geas hook sub`: one line whose first word is
// geas, geas.exe or geas-plugin (a path and quotes allowed), then `hook` and sub, then only the
// hook's own flags with plain values.
func isGeasHookCommand(command, sub string) bool {
	if strings.ContainsFunc(command, func(r rune) bool { return r < 0x20 && r != ' ' && r != '\t' || r == 0x7f }) {
		return false // a newline would start a second command
	}
	words := strings.Fields(command)
	if len(words) < 3 || words[1] != "hook" || words[2] != sub {
		return false
	}
	launcher := strings.Trim(words[0], `"'`)
	switch path.Base(strings.ReplaceAll(launcher, `\`, "/")) {
	case "geas", "geas.exe", "geas-plugin":
	default:
		return false
	}
	rest := words[3:]
	for len(rest) > 0 {
		name, value, inline := strings.Cut(rest[0], "=")
		if !slices.Contains(hookFlags, name) {
			return false
		}
		if !inline {
			if len(rest) < 2 {
				return false
			}
			value, rest = rest[1], rest[1:]
		}
		if !plainArg.MatchString(value) || strings.HasPrefix(value, "-") {
			return false
		}
		rest = rest[1:]
	}
	return true
}

// presentInOtherFiles finds our entries in the other *.json files of spec's directory, which the
// harness reads too: event → the file that runs our hook for it. A file that cannot be read is
// noted and skipped (the harness itself will complain of it).
func presentInOtherFiles(root *os.Root, spec harnessSpec) (map[string]string, []string) {
	dir := path.Dir(spec.file)
	found := map[string]string{}
	notes := []string{}
	if fi, err := root.Lstat(dir); err != nil || !fi.IsDir() {
		return found, notes
	}
	d, err := fsutil.OpenDir(root, dir)
	if err != nil {
		return found, notes
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return found, notes
	}
	slices.Sort(names)
	for _, n := range names {
		name := dir + "/" + n
		if name == spec.file || !strings.HasSuffix(n, ".json") {
			continue
		}
		if fi, err := root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		data, err := fsutil.ReadLimited(root, name, maxHookConfigSize)
		if err == nil {
			var scratch HookFile
			_, err = mergeHooks(spec, data, &scratch, nil)
			for _, p := range scratch.Present {
				found[strings.SplitN(p, ":", 2)[0]] = name
			}
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s (read by %s too) was not searched for geas hooks: %v", name, spec.name, err))
		}
	}
	return found, notes
}

// claudeNotes are what Claude Code settings say that changes how the hooks run: all hooks
// disabled, or the geas-gate plugin enabled too.
func claudeNotes(data []byte) []string {
	var s struct {
		DisableAllHooks any            `json:"disableAllHooks"`
		EnabledPlugins  map[string]any `json:"enabledPlugins"`
	}
	if json.Unmarshal(data, &s) != nil {
		return nil
	}
	var notes []string
	if s.DisableAllHooks == true {
		notes = append(notes, "disableAllHooks is true in these settings: Claude Code runs none of the hooks, the gate's included, until it is removed")
	}
	for k, v := range s.EnabledPlugins {
		if strings.HasPrefix(k, "geas-gate@") && v == true {
			notes = append(notes, "enabledPlugins enables the geas-gate plugin here too: its hooks and these both run on every stop; disable one")
			break
		}
	}
	return notes
}

func member(members []jsonobj.Member, key string) (json.RawMessage, bool) {
	for _, m := range members {
		if m.Key == key {
			return m.Value, true
		}
	}
	return nil, false
}

// indentOf is the indentation of data's first indented line (spaces or tabs), "  " when it has
// none, so a merged file keeps the indentation it was written with.
func indentOf(data []byte) string {
	for _, line := range bytes.Split(data, []byte("\n"))[1:] {
		trimmed := bytes.TrimLeft(line, " \t")
		ws := line[:len(line)-len(trimmed)]
		if len(trimmed) == 0 || len(ws) == 0 {
			continue
		}
		if len(ws) <= 8 && (bytes.Count(ws, []byte(" ")) == len(ws) || bytes.Count(ws, []byte("\t")) == len(ws)) {
			return string(ws)
		}
		break
	}
	return "  "
}

// noDuplicateKeys refuses JSON with a key twice in one object, at any depth: parsers disagree on
// which one counts, so geas could see its hook where the harness sees another command.
func noDuplicateKeys(data []byte) error {
	var v any
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&v); err != nil {
		return fmt.Errorf("not plain JSON (%v)", err)
	}
	if ptr, key, ok := schemas.DuplicateKey(data); ok {
		if ptr == "" {
			ptr = "/"
		}
		return fmt.Errorf("key %q appears twice in one object (%s)", key, ptr)
	}
	return nil
}
