package tiers

import (
	"fmt"

	"github.com/geas-dev/geas/internal/canon"
)

// short is canon.Short under the short name the checks' messages use.
func short(sha string) string { return canon.Short(sha) }

// truncate cuts s to its first n bytes and marks the cut with "…". The cut may fall inside a
// UTF-8 sequence; cutText (quote.go) and cut (bounds.go) cut on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func exitText(code *int, errText string) string {
	if code == nil {
		if errText != "" {
			return "abnormally (" + errText + ")"
		}
		return "abnormally"
	}
	return fmt.Sprint(*code)
}
