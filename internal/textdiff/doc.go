// Package textdiff compares two versions of a text: the unified diff that
// turns one into the other and the lines it inserts and deletes.
//
// Vocabulary:
//   - A content is the whole text of one version, as bytes; it is split
//     into lines at '\n', and a last line without one is a line too.
//   - An insertion is a line of the new content that is not in the old
//     one, a deletion the reverse; a changed line is one of each.
//   - A patch is a unified diff with three lines of context: a "--- "
//     and a "+++ " line with the two labels, then the hunks, as diff -u
//     and git print them ("\ No newline at end of file" after a last line
//     without one). It is empty when the contents are equal.
//
// Caveats: the contents are compared as text, whatever they hold: telling
// binary files apart, and the headers git prints above a patch (modes,
// "new file"), are the caller's. Both contents are held in memory, and the
// diff takes time that grows with the product of their lengths in lines
// where they differ most.
package textdiff
