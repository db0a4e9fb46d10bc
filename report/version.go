package report

import "runtime/debug"

// toolVersion is the geas that writes a report, as geas version's short form says it: the module
// version ("v1.2.3"), or for a build from a checkout "devel" with the commit it was built from
// and "-dirty" when the tree was modified ("devel" alone when the build has no VCS stamp, as a
// test binary has none).
func toolVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	v, dirty := "devel", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v += "-" + s.Value[:min(12, len(s.Value))]
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		v += "-dirty"
	}
	return v
}
