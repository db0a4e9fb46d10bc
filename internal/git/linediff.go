package git

import (
	"strings"

	"github.com/go-git/go-git/v5/utils/diff"
)

// addedByLineDiff returns the lines of newText that go-git's line diff (diff.Do, diffmatchpatch
// over lines) reports as inserted, numbered in newText, exactly as appendAdded(nil, path,
// diff.Do(oldText, newText)) does, without running the diff when the answer is certain:
// diffmatchpatch trims the common prefix and suffix lines itself, so when what is left is an
// insertion alone, a deletion alone, or a replacement with no line in common, its answer is that
// block (its final merge pass cannot move an edit that no equality on either side repeats, which
// is checked). Anything else runs diff.Do on the whole texts.
func addedByLineDiff(path, oldText, newText string) []AddedLine {
	oldLines, newLines := splitLines(oldText), splitLines(newText)
	p := 0
	for p < len(oldLines) && p < len(newLines) && oldLines[p] == newLines[p] {
		p++
	}
	s := 0
	for s < len(oldLines)-p && s < len(newLines)-p && oldLines[len(oldLines)-1-s] == newLines[len(newLines)-1-s] {
		s++
	}
	oldMid, newMid := oldLines[p:len(oldLines)-s], newLines[p:len(newLines)-s]
	switch {
	case len(newMid) == 0:
		return nil // nothing inserted, wherever the merge pass moves the deletion
	case len(oldMid) == 0:
		// A lone insertion moves when it ends with the whole prefix or starts with the whole
		// suffix (diffmatchpatch's DiffCleanupMerge, second pass): leave that to the diff.
		if (p > 0 && endsWith(newMid, newLines[:p])) || (s > 0 && startsWith(newMid, newLines[len(newLines)-s:])) {
			return appendAdded(nil, path, diff.Do(oldText, newText))
		}
	default:
		seen := make(map[string]bool, len(oldMid))
		for _, l := range oldMid {
			seen[l] = true
		}
		for _, l := range newMid {
			if seen[l] {
				return appendAdded(nil, path, diff.Do(oldText, newText))
			}
		}
	}
	added := make([]AddedLine, 0, len(newMid))
	for i, l := range newMid {
		text := strings.TrimSuffix(strings.TrimSuffix(l, "\n"), "\r")
		added = append(added, AddedLine{Path: path, Line: p + 1 + i, Text: text})
	}
	return added
}

// splitLines splits s as diffmatchpatch's line mode does: each line with its "\n", a last line
// without one.
func splitLines(s string) []string {
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for l := range strings.Lines(s) {
		lines = append(lines, l)
	}
	return lines
}

func endsWith(lines, suffix []string) bool {
	return len(lines) >= len(suffix) && equalLines(lines[len(lines)-len(suffix):], suffix)
}

func startsWith(lines, prefix []string) bool {
	return len(lines) >= len(prefix) && equalLines(lines[:len(prefix)], prefix)
}

func equalLines(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}
