// Package git owns everything geas reads from (and, for the demo, writes to) a git repository:
// opening a project's repository (Repo; linked worktrees too), resolving revisions and
// abbreviations, ancestry through the commit-graph, the files and added lines between two
// commits, files as of a commit, the index and working-tree state (CheckWorktree), throw-away
// checkouts, and a Writer that builds a repository commit by commit. Objects are read from
// memory-mapped packs and their indexes (store.go, pack.go, object.go) and the commit-graph
// (graphfile.go, read in place from the mapped files; the walk in graph.go) rather than through
// go-git's own object storage and packfile decoder.
//
// It is the only package that imports go-git (github.com/go-git/*); the rest of geas sees
// commit ids as strings and paths as slash-separated strings. A Repo only reads.
package git
