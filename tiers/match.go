package tiers

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/geas-dev/geas/contract"
)

// indexForm reads a 1-based index (prefix is "AC" for criteria, "R" for risks; SPEC §5.3 A): the
// prefixed forms "AC3", "AC-3", "AC 3" alone or followed by more text ("AC3 isTTY guard"), and the
// bare number "3" alone or followed by ":", ".", ")" or " - " and more text ("3: lockout"). A bare
// number followed by a word is text: "3 failed logins lock the account" is not criterion 3.
func indexForm(prefix, text string) (int, bool) {
	text = strings.TrimSpace(text)
	m := indexRes()[prefix].FindStringSubmatch(text)
	if m == nil {
		m = bareIndex().FindStringSubmatch(text)
	}
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// After the number: the end, or a separator (":", ".", ")" followed by white space or the end, or
// " - "); a prefixed form may also be followed by white space and text. Compiled on first use,
// not at start-up.
var (
	indexRes = sync.OnceValue(func() map[string]*regexp.Regexp {
		return map[string]*regexp.Regexp{
			"AC": regexp.MustCompile(`^(?i:ac)[- ]?([0-9]{1,9})(?:$|[:.)](?:\s|$)|\s)`),
			"R":  regexp.MustCompile(`^(?i:r|risk)[- ]?([0-9]{1,9})(?:$|[:.)](?:\s|$)|\s)`),
		}
	})
	bareIndex = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{1,9})(?:$|[:.)](?:\s|$)| - )`) })
)

// normalize trims, case-folds and collapses white space, for matching texts.
func normalize(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// matchItem is one item an evidence entry can bind to: a criterion or a known risk.
type matchItem struct {
	ID, Text string
}

// binder binds evidence entries to items by the rules of SPEC §5.3 A, each entry to at most one
// item, in time linear in the items and the entries: the maps are built once.
type binder struct {
	prefix string
	n      int              // number of items
	byID   map[string][]int // item id, and "AC<n>" for an item without an id -> item indexes (0-based)
	byName map[string][]int // the id of an item that has one, for an entry whose text names it
	byText map[string][]int // normalized text -> item indexes
}

func newBinder(prefix string, items []matchItem) *binder {
	b := &binder{prefix: prefix, n: len(items), byID: map[string][]int{}, byName: map[string][]int{}, byText: map[string][]int{}}
	for i, it := range items {
		id := strings.TrimSpace(it.ID)
		if id != "" {
			b.byID[id] = append(b.byID[id], i)
			b.byName[id] = append(b.byName[id], i)
		} else {
			label := prefix + strconv.Itoa(i+1)
			b.byID[label] = append(b.byID[label], i)
		}
		if t := normalize(it.Text); t != "" {
			b.byText[t] = appendOnce(b.byText[t], i)
		}
	}
	return b
}

func appendOnce(list []int, i int) []int {
	if len(list) > 0 && list[len(list)-1] == i {
		return list
	}
	return append(list, i)
}

// binding is the outcome of binding one entry: the item it binds to (0-based), or -1; when the rule
// that applied would bind it to several items, those items (the entry binds to none).
type binding struct {
	item      int
	rule      string
	ambiguous []int
}

// bind binds one entry (its id field and its text) by the first rule that applies: an entry with
// an id binds by id only (a criterion's id, or the label "AC3" of a criterion without one); else
// its text names an item's id or equals its text after normalize; else its text is an index form.
func (b *binder) bind(id, text string) binding {
	one := func(list []int, rule string) binding {
		if len(list) == 1 {
			return binding{item: list[0], rule: rule}
		}
		return binding{item: -1, rule: rule, ambiguous: list}
	}
	if id = strings.TrimSpace(id); id != "" {
		if list, ok := b.byID[id]; ok {
			return one(list, "id")
		}
		return binding{item: -1, rule: "id"}
	}
	if list, ok := b.byName[strings.TrimSpace(text)]; ok {
		return one(list, "id")
	}
	if t := normalize(text); t != "" {
		if list, ok := b.byText[t]; ok {
			return one(list, "text")
		}
	}
	if n, ok := indexForm(b.prefix, text); ok && n <= b.n {
		return binding{item: n - 1, rule: "index"}
	}
	return binding{item: -1}
}

// ambiguity describes an ambiguous binding for a warning: which items the entry would bind to.
func (b *binder) ambiguity(bd binding, label func(int) string) string {
	names := make([]string, len(bd.ambiguous))
	for i, it := range bd.ambiguous {
		names[i] = label(it)
	}
	return fmt.Sprintf("by %s it would bind to %s, so it binds to none", bd.rule, strings.Join(names, " and "))
}

func criteriaItems(cs []contract.Criterion) []matchItem {
	items := make([]matchItem, len(cs))
	for i, c := range cs {
		items[i] = matchItem{ID: c.ID, Text: c.Criterion}
	}
	return items
}

// criterionLabel names a criterion in check names: its id, else its 1-based index.
func criterionLabel(idx int, c contract.Criterion) string {
	if c.ID != "" {
		return c.ID
	}
	return "AC" + strconv.Itoa(idx)
}
