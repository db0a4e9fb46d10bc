package tiers

import (
	"fmt"

	"github.com/geas-dev/geas/internal/canon"
)

// short is canon.Short under the short name the checks' messages use.
func short(sha string) string { return canon.Short(sha) }

func exitText(code *int, errText string) string {
	if code == nil {
		if errText != "" {
			return "abnormally (" + errText + ")"
		}
		return "abnormally"
	}
	return fmt.Sprint(*code)
}
