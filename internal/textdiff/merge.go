package textdiff

import (
	"bytes"
	"slices"
)

// Merge is a three-way merge of lines, as diff3 and git merge them: it
// applies to base both the changes from base to ours and those from base
// to theirs, and reports whether they could all be applied. Each is
// compared with base line by line; the lines kept unchanged on both
// sides split the texts into chunks, and each chunk takes the side that
// changed it (either, when both changed it the same way). A chunk both
// sides changed differently is a conflict: changes to the same lines,
// to adjacent lines, or insertions at the same place. Then clean is false
// and merged is nil.
//
// Lines end at '\n' and keep their bytes: "\r\n" endings stay as they
// are, and a last line without a newline differs from the same line with
// one. Merge(base, x, base), Merge(base, base, x) and Merge(base, x, x)
// are all x, and Merge(base, ours, theirs) equals Merge(base, theirs,
// ours).
func Merge(base, ours, theirs []byte) (merged []byte, clean bool) {
	switch {
	case bytes.Equal(base, theirs), bytes.Equal(ours, theirs):
		return bytes.Clone(ours), true
	case bytes.Equal(base, ours):
		return bytes.Clone(theirs), true
	}
	return mergeLines(base, ours, theirs)
}

// mergeLines is Merge without its shortcuts for equal sides.
func mergeLines(base, ours, theirs []byte) ([]byte, bool) {
	bl, ol, tl := splitLines(base), splitLines(ours), splitLines(theirs)
	in := newInterner(len(bl))
	b, o, t := in.tokens(bl), in.tokens(ol), in.tokens(tl)
	mo, mt := matchLines(b, o), matchLines(b, t)
	var out [][]byte
	var i, j, k int // next line of base, ours and theirs
	for i <= len(b) {
		// The next base line kept by both sides ends the chunk.
		next := i
		for next < len(b) && (mo[next] < 0 || mt[next] < 0) {
			next++
		}
		je, ke := len(o), len(t)
		if next < len(b) {
			je, ke = mo[next], mt[next]
		}
		chunk, ok := resolve(b[i:next], o[j:je], t[k:ke], ol[j:je], tl[k:ke])
		if !ok {
			return nil, false
		}
		out = append(out, chunk...)
		if next < len(b) {
			out = append(out, bl[next])
		}
		i, j, k = next+1, je+1, ke+1
	}
	return bytes.Join(out, nil), true
}

// resolve merges one chunk, given as line numbers (base, ours, theirs)
// and the lines of both sides: the side that changed it, either when both
// did the same, and false when both changed it differently.
func resolve(base, ours, theirs []int, oursLines, theirsLines [][]byte) ([][]byte, bool) {
	switch {
	case slices.Equal(base, ours):
		return theirsLines, true
	case slices.Equal(base, theirs), slices.Equal(ours, theirs):
		return oursLines, true
	}
	return nil, false
}
