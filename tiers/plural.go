package tiers

import "strconv"

// counted is n followed by the words for that many: counted(1, "file differs", "files differ")
// is "1 file differs", counted(2, ...) "2 files differ", counted(0, ...) "0 files differ".
func counted(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
