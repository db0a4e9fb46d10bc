package report

import "runtime/debug"

// ShortVersion is geas's one-word version, the one geas version prints first and a SARIF log's
// driver carries: the module version ("v1.2.3"), or for a build from a checkout ("" or
// "(devel)") "devel" with the first 12 characters of the commit it was built from and "-dirty"
// when the tree was modified ("devel" alone when the build has no VCS stamp, as a test binary has
// none).
func ShortVersion(version, revision string, modified bool) string {
	if version != "" && version != "(devel)" {
		return version
	}
	s := "devel"
	if revision != "" {
		s += "-" + revision[:min(12, len(revision))]
	}
	if modified {
		s += "-dirty"
	}
	return s
}

// toolVersion is the ShortVersion of the geas that writes a report, from its build info.
func toolVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ShortVersion("", "", false)
	}
	revision, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return ShortVersion(bi.Main.Version, revision, modified)
}
