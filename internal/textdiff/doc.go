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
//     and a "+++ " line with the two labels, then the hunks, as git diff
//     prints them ("\ No newline at end of file" after a last line without
//     one, the function line after each hunk's "@@"). It is empty when the
//     contents are equal.
//   - A line diff (Unified, Count) is git diff's (its default Myers
//     diff, xdiff), tie for tie: the lines both contents share at their
//     ends are set aside, then the lines xdiff sets aside (those the other
//     content lacks, and frequent ones amid them), the rest is searched
//     as xdiff searches (Myers from both ends, with its bounds on long
//     diffs), and the runs of changed lines that could sit higher or lower
//     are slid where git slides them (next to the other side's changes,
//     else where its indent heuristic puts them). So its counts and hunks
//     are git's: a shortest script's, but for the lines xdiff sets aside
//     and for long diffs, where they may count a few lines more.
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
// "new file", quoting names with QuotePath), are the caller's. All
// contents are held in memory. A line diff of long, very different texts
// is not the shortest: like git's, its search takes the furthest path it
// has past a cost that grows with the square root of the lines. A merge's
// line diffs are shortest ones but stop searching after a fixed amount of
// work (a fraction of a second) and take what they have not compared as
// replaced whole: a merge of long, very different texts may then report a
// conflict a longer search would have avoided, but never merges wrongly.
package textdiff
