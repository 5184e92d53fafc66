package scan

// dirEntry is one name a directory listing returned; dir is true when the
// listing says it is a directory (a file system that does not say leaves
// it false, and the walk stats the entry to learn).
type dirEntry struct {
	name string
	dir  bool
}

// join is path.Join for a directory's relative path and the name of one of
// its entries (never empty, ".", ".." nor holding a "/"), without the
// allocation of cleaning.
func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}
