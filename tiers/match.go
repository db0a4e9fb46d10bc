package tiers

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
)

// indexForm reads a 1-based index written "3", "AC3", "AC-3" or "AC 3" (prefix is "AC" for
// criteria, "R" for risks), alone or at the start of the text ("AC3 isTTY guard").
func indexForm(prefix, text string) (int, bool) {
	re := indexRes[prefix]
	m := re.FindStringSubmatch(strings.TrimSpace(text))
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

var indexRes = map[string]*regexp.Regexp{
	"AC": regexp.MustCompile(`^(?:(?i:ac)[- ]?)?([0-9]+)(?:$|[^0-9A-Za-z_])`),
	"R":  regexp.MustCompile(`^(?:(?i:r|risk)[- ]?)?([0-9]+)(?:$|[^0-9A-Za-z_])`),
}

// normalize trims, case-folds and collapses white space, for matching texts.
func normalize(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// matchesItem reports whether an evidence entry (its id and text) refers to item number idx
// (1-based) whose id and text are given: by id, by index form, or by equal normalized text.
func matchesItem(prefix string, entryID, entryText string, idx int, itemID, itemText string) bool {
	if entryID != "" {
		// An entry that names an id refers to that item only: by the item's id, or, for an item
		// without one, by the index the id spells ("AC3").
		if itemID != "" {
			return entryID == itemID
		}
		n, ok := indexForm(prefix, entryID)
		return ok && n == idx
	}
	if itemID != "" && strings.TrimSpace(entryText) == itemID {
		return true
	}
	if n, ok := indexForm(prefix, entryText); ok && n == idx {
		return true
	}
	return normalize(entryText) != "" && normalize(entryText) == normalize(itemText)
}

func criterionMatches(r evidence.CriterionResult, idx int, c contract.Criterion) bool {
	return matchesItem("AC", r.ID, r.Criterion, idx, c.ID, c.Criterion)
}

// criterionLabel names a criterion in check names: its id, else its 1-based index.
func criterionLabel(idx int, c contract.Criterion) string {
	if c.ID != "" {
		return c.ID
	}
	return "AC" + strconv.Itoa(idx)
}
