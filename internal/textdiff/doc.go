// Package textdiff compares versions of a text: the unified diff that
// turns one into another, the lines it inserts and deletes, and the
// three-way merge of two versions made from a common one.
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
//   - A merge (Merge) of base, ours and theirs applies both sides'
//     changes to base, as diff3 does: the base lines both sides kept
//     split the texts into chunks, each taken from the side that changed
//     it. A conflict is a chunk both sides changed differently (the same
//     lines, adjacent lines, or insertions at one place); a merge with
//     none is clean. Its line diffs are shortest edit scripts (Myers),
//     computed on whole lines, so "\r\n" endings and a missing last
//     newline are kept byte for byte.
//
// Caveats: the contents are compared as text, whatever they hold: telling
// binary files apart, and the headers git prints above a patch (modes,
// "new file"), are the caller's. All contents are held in memory. A
// unified diff takes time that grows with the product of the two lengths
// in lines where they differ most. A merge's line diffs stop searching
// after a fixed amount of work (a fraction of a second) and take what
// they have not compared as replaced whole: a merge of long, very
// different texts may then report a conflict a longer search would have
// avoided, but never merges wrongly.
package textdiff
