package tiers

import (
	"fmt"

	"github.com/geas-dev/geas/internal/canon"
	"github.com/geas-dev/geas/internal/text"
)

// short is canon.Short under the short name the checks' messages use.
func short(sha string) string { return canon.Short(sha) }

// truncate cuts s to at most n bytes between characters (text.Cut) and marks the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return text.Cut(s, n) + "…"
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
