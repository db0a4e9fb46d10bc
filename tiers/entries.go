package tiers

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/geas-dev/geas/contract"
	"github.com/geas-dev/geas/evidence"
	"github.com/geas-dev/geas/internal/text"
)

// Entry problems: the criteria_results and rubric_scores entries of an evidence file that count
// for nothing the contract names, found by the rules the gate binds them by (bindCriteria, and the
// exact dimension names of collectScores). A "did you mean" only names what the entry was probably
// meant for: it never binds anything, so a typo is reported, never counted.

// Kinds of EntryProblem.
const (
	EntryUnmatched = "unmatched" // binds to no criterion, or names no dimension of the contract
	EntryAmbiguous = "ambiguous" // one rule would bind it to two criteria: it binds to none
	EntryDuplicate = "duplicate" // binds to what an earlier entry of the same file binds to
)

// EntryProblem is one evidence entry that does not count as the file's author probably meant.
type EntryProblem struct {
	Field   string // "criteria_results" or "rubric_scores"
	Index   int    // 0-based position in Field
	Kind    string // EntryUnmatched, EntryAmbiguous or EntryDuplicate
	Value   string // what the entry names: its id, its criterion text or its dimension
	Suggest string // what it was probably meant for ("" when nothing is close enough)
	Message string // the whole sentence, naming the file
}

func (p EntryProblem) String() string { return p.Message }

// EntryProblems lists the entries of e that bind to no criterion of c (or bind ambiguously), the
// rubric_scores that name no dimension of c, and the entries that bind to what an earlier entry of
// e already binds to, in field order. It reads nothing and changes no binding: the gate counts
// exactly what it counted without it.
func EntryProblems(c *contract.Contract, e *evidence.Evidence) []EntryProblem {
	crs := c.AcceptanceCriteria
	b := newBinder("AC", criteriaItems(crs))
	label := func(i int) string { return criterionLabel(i+1, crs[i]) }
	var out []EntryProblem
	first := map[int]int{}
	var sg *suggester
	suggested := 0
	for k, res := range e.CriteriaResults {
		bd := b.bind(res.ID, res.Criterion)
		switch {
		case bd.item >= 0:
			if j, ok := first[bd.item]; ok {
				out = append(out, EntryProblem{Field: "criteria_results", Index: k, Kind: EntryDuplicate, Value: entryValue(res),
					Message: fmt.Sprintf("criteria_results entry %s of %s binds to %s, as entry %s does: both count, and a failed one fails %s",
						quoteEntry(entryValue(res)), e.Name, label(bd.item), quoteEntry(entryValue(e.CriteriaResults[j])), label(bd.item))})
				continue
			}
			first[bd.item] = k
		case len(bd.ambiguous) > 0:
			out = append(out, EntryProblem{Field: "criteria_results", Index: k, Kind: EntryAmbiguous, Value: entryValue(res),
				Message: fmt.Sprintf("criteria_results entry %s of %s: %s", quoteEntry(entryValue(res)), e.Name, b.ambiguity(bd, label))})
		default:
			if sg == nil {
				sg = criteriaSuggester(crs)
			}
			suggested++
			sg.off = suggested > maxSuggested
			out = append(out, unmatchedCriterion(e.Name, k, res, sg))
		}
	}
	dims := c.Rubric.Dimensions
	have := dimensionNames(dims)
	seen := map[string]int{}
	var dsg *suggester
	for k, s := range e.RubricScores {
		switch j, dup := seen[s.Dimension]; {
		case dup:
			out = append(out, EntryProblem{Field: "rubric_scores", Index: k, Kind: EntryDuplicate, Value: s.Dimension,
				Message: fmt.Sprintf("rubric_scores entry %s of %s scores %s again (as entry %d does): the lowest counts", quoteEntry(s.Dimension), e.Name, s.Dimension, j)})
		case have[s.Dimension]:
			seen[s.Dimension] = k
		default:
			if dsg == nil {
				dsg = dimensionSuggester(dims)
			}
			suggested++
			dsg.off = suggested > maxSuggested
			out = append(out, unmatchedDimension(e.Name, k, s, dsg))
		}
	}
	return out
}

// dimensionNames are the names of dims, matched exactly as collectScores matches them.
func dimensionNames(dims []contract.Dimension) map[string]bool {
	m := make(map[string]bool, len(dims))
	for _, d := range dims {
		m[d.Name] = true
	}
	return m
}

// entryValue is what a criteria_results entry names: its id when it has one (it binds by id only),
// else its criterion text.
func entryValue(res evidence.CriterionResult) string {
	if strings.TrimSpace(res.ID) != "" {
		return res.ID
	}
	return res.Criterion
}

// unmatchedCriterion is the problem of criteria_results entry k of file, which binds to nothing;
// sg holds the contract's criteria (criteriaSuggester).
func unmatchedCriterion(file string, k int, res evidence.CriterionResult, sg *suggester) EntryProblem {
	v := entryValue(res)
	p := EntryProblem{Field: "criteria_results", Index: k, Kind: EntryUnmatched, Value: v}
	what := "entry"
	if strings.TrimSpace(res.ID) != "" {
		what = "id" // an id binds by id only: a criterion's id, or the label of one without
	}
	p.Message = fmt.Sprintf("criteria_results %s %s of %s matches no criterion of the contract (%s)", what, quoteEntry(v), file, sg.have)
	// An id written as an index (an entry with an id binds by id only) meant that criterion; a
	// number past the last criterion is not a typo of another number: the list says how many
	// there are.
	switch n, index := indexForm("AC", v); {
	case index && n <= len(sg.labels) && !sg.off:
		p.Suggest = sg.labels[n-1]
	case !index:
		p.Suggest = sg.suggest(v)
	}
	p.Message += didYouMean(v, p.Suggest)
	return p
}

// unmatchedDimension is the problem of rubric_scores entry k of file, which names no dimension;
// sg holds the contract's dimensions (dimensionSuggester).
func unmatchedDimension(file string, k int, s evidence.RubricScore, sg *suggester) EntryProblem {
	p := EntryProblem{Field: "rubric_scores", Index: k, Kind: EntryUnmatched, Value: s.Dimension}
	p.Suggest = sg.suggest(s.Dimension)
	p.Message = fmt.Sprintf("rubric_scores entry %s of %s matches no dimension of the contract (%s)", quoteEntry(s.Dimension), file, sg.have) +
		didYouMean(s.Dimension, p.Suggest)
	return p
}

// didYouMean is the end of a problem's sentence: the suggestion, and the characters of v that only
// look like ASCII when that is what sets it apart.
func didYouMean(v, suggest string) string {
	if suggest == "" {
		return ""
	}
	s := "; did you mean " + suggest + "?"
	if odd := oddRunes(v); odd != "" {
		s += " (" + quoteEntry(v) + " holds " + odd + ")"
	}
	return s
}

// oddRunes names the characters of s that are invisible, or that only look like ASCII letters and
// digits (fullwidth forms, Cyrillic and Greek look-alikes), as U+XXXX.
func oddRunes(s string) string {
	var odd []string
	for _, r := range s {
		if r < 0x80 {
			continue
		}
		if _, ok := lookalikes[r]; ok || (r >= 0xFF01 && r <= 0xFF5E) || unicode.Is(unicode.Cf, r) {
			odd = append(odd, fmt.Sprintf("U+%04X", r))
		}
	}
	if len(odd) == 0 {
		return ""
	}
	return "characters that only look like ASCII or are invisible: " + strings.Join(odd[:min(len(odd), 5)], " ")
}

// quoteEntry shows an entry's value in a sentence: single-quoted, on one line, bounded to about
// 80 bytes, cut between characters (never inside one: the look-alikes are what it shows).
func quoteEntry(v string) string {
	return "'" + text.Truncate(oneLine(v), 80) + "'"
}

// suggester finds what an unmatched name was probably meant for among candidates: the criteria
// or the dimensions of a contract.
type suggester struct {
	cands  []candidate
	labels []string // the criteria's labels or the dimensions' names
	have   string   // labels as a problem lists them
	off    bool     // suggest nothing (past maxSuggested)
}

// listedOf lists names, at most ten of them, or says there are none.
func listedOf(names []string) string {
	switch {
	case len(names) == 0:
		return "it has none"
	case len(names) <= 10:
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
}

// candidate is one name an entry may have meant: its key (typoKey) and how a suggestion shows it.
type candidate struct {
	key, show string
}

// maxDistanceCandidates bounds the candidates an unmatched name is compared with by edit distance:
// past it only the folded forms are compared, so naming thousands of entries of a contract with
// thousands of criteria stays linear.
const maxDistanceCandidates = 500

// maxKeyRunes bounds the length of the names compared by edit distance.
const maxKeyRunes = 200

// maxSuggested bounds the unmatched entries of one file that get a "did you mean": past it they
// are named without one, so a file of a hundred thousand typos costs no more than fifty.
const maxSuggested = 50

func criteriaSuggester(crs []contract.Criterion) *suggester {
	sg := &suggester{labels: make([]string, len(crs))}
	for i, cr := range crs {
		l := criterionLabel(i+1, cr)
		sg.labels[i] = l
		sg.cands = append(sg.cands, candidate{key: typoKey(l), show: l})
		if t := strings.TrimSpace(cr.Criterion); t != "" {
			sg.cands = append(sg.cands, candidate{key: typoKey(t), show: fmt.Sprintf("%s %q", l, text.Truncate(oneLine(t), 60))})
		}
	}
	sg.have = listedOf(sg.labels)
	return sg
}

func dimensionSuggester(dims []contract.Dimension) *suggester {
	sg := &suggester{labels: make([]string, len(dims))}
	for i, d := range dims {
		sg.cands = append(sg.cands, candidate{key: typoKey(d.Name), show: d.Name})
		sg.labels[i] = d.Name
	}
	sg.have = listedOf(sg.labels)
	return sg
}

// suggest returns the one candidate v most probably meant: the one whose
// key equals v's, else the one nearest by edit distance within a bound that grows with the length;
// "" when none is near or two are equally near.
func (sg *suggester) suggest(v string) string {
	if sg.off {
		return ""
	}
	k := typoKey(v)
	if k == "" {
		return ""
	}
	pick := func(match func(c candidate) int) string {
		best, bestD, tie := "", -1, false
		for _, c := range sg.cands {
			d := match(c)
			switch {
			case d < 0:
			case bestD < 0 || d < bestD:
				best, bestD, tie = c.show, d, false
			case d == bestD && c.show != best:
				tie = true
			}
		}
		if tie {
			return ""
		}
		return best
	}
	if s := pick(func(c candidate) int {
		if c.key == k {
			return 0
		}
		return -1
	}); s != "" || len(sg.cands) > maxDistanceCandidates {
		return s
	}
	if utf8.RuneCountInString(k) > maxKeyRunes {
		return ""
	}
	kr := []rune(k)
	return pick(func(c candidate) int {
		cr := []rune(c.key)
		bound := typoBound(min(len(kr), len(cr)))
		if len(cr) > maxKeyRunes || abs(len(cr)-len(kr)) > bound {
			return -1
		}
		if d := text.EditDistance(kr, cr, bound); d <= bound {
			return d
		}
		return -1
	})
}

// typoBound is the edit distance within which a name of n runes is taken for a typo of another:
// one for short names, a quarter of the length for longer ones, never more than eight.
func typoBound(n int) int {
	switch {
	case n <= 3:
		return 1
	case n <= 8:
		return 2
	}
	return min(n/4, 8)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// typoKey is a name as a typo check compares it: fullwidth forms and Cyrillic and Greek letters
// that look like ASCII read as ASCII, case folded, and only letters and digits kept, so that
// "Code Quality", "code-quality", "codequality" and "АС1" (Cyrillic) compare equal to their ASCII
// spelling. It is for suggestions only: nothing binds by it.
func typoKey(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		if a, ok := lookalikes[r]; ok {
			r = a
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// lookalikes are Cyrillic and Greek letters that look like an ASCII letter, with that letter.
var lookalikes = map[rune]rune{
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'Х': 'X', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y',
	'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'ԁ': 'd', 'ӏ': 'l',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'ο': 'o', 'ι': 'i', 'ν': 'v',
	'ı': 'i',
}
