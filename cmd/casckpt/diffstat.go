package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
	"golang.org/x/term"

	"github.com/casckpt/casckpt"
)

// This file is diff --stat: the diff laid out as git diff --stat does.

// statWidth is the width --stat fills, as git finds it: $COLUMNS when it
// is a positive number, else the width of the terminal on stdout, else 80.
func (g *globals) statWidth() int {
	if n, err := strconv.Atoi(g.env("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := g.io.out.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// statFile is one line of --stat: for a binary file, added and deleted
// are its new and old sizes in bytes, as git shows them.
type statFile struct {
	name           string
	added, deleted int64
	binary         bool
}

// writeStat prints the diff as git diff --stat does at the given width
// (git's diff.c show_stats): the name column as wide as the longest name
// or shortened with "..." to fit, the counts right-aligned, and a bar of
// + and - scaled to the room left, in which every change gets a mark.
func writeStat(w io.Writer, res casckpt.DiffResult, width int) {
	if len(res.Files) == 0 {
		return
	}
	files, l := layOutStat(res.Files, int64(width))
	var adds, dels int64
	for _, f := range files {
		if !f.binary {
			adds += f.added
			dels += f.deleted
		}
		l.writeLine(w, f)
	}
	fmt.Fprintln(w, statSummary(int64(len(files)), adds, dels))
}

// statLayout is how --stat lays out its lines: the widths of the name
// column, of the counts and of the bar, and the largest change of a text
// file, which the bar scales to its width.
type statLayout struct {
	nameWidth, numberWidth, graphWidth, maxChange int64
}

// layOutStat makes the lines of --stat for the changed files and fits them
// to the total width as git does: the bar gets at most 3/8 of it (and at
// least 6 columns), the name column the rest.
func layOutStat(changed []casckpt.FileDiff, total int64) ([]statFile, statLayout) {
	files := make([]statFile, len(changed))
	var maxLen, maxChange, binWidth, numberWidth int64
	for i, f := range changed {
		sf := statFile{name: casckpt.QuotePath(f.Path), added: f.Insertions, deleted: f.Deletions, binary: f.Binary}
		maxLen = max(maxLen, int64(uniseg.StringWidth(sf.name)))
		if f.Binary {
			sf.added, sf.deleted = 0, 0
			if f.New.Kind == casckpt.KindFile {
				sf.added = f.New.Size
			}
			if f.Old.Kind == casckpt.KindFile {
				sf.deleted = f.Old.Size
			}
			binWidth = max(binWidth, 14+decimalWidth(sf.added)+decimalWidth(sf.deleted))
			numberWidth = 3 // the counts align with "Bin"
		} else {
			maxChange = max(maxChange, sf.added+sf.deleted)
		}
		files[i] = sf
	}
	numberWidth = max(numberWidth, decimalWidth(maxChange))
	total = max(total, 16+6+numberWidth)
	graphWidth := maxChange
	if maxChange+4 <= binWidth {
		graphWidth = binWidth - 4
	}
	nameWidth := maxLen
	if nameWidth+numberWidth+6+graphWidth > total {
		if graphWidth > total*3/8-numberWidth-6 {
			graphWidth = max(total*3/8-numberWidth-6, 6)
		}
		if nameWidth > total-numberWidth-6-graphWidth {
			nameWidth = total - numberWidth - 6 - graphWidth
		} else {
			graphWidth = total - numberWidth - 6 - nameWidth
		}
	}
	return files, statLayout{nameWidth: nameWidth, numberWidth: numberWidth, graphWidth: graphWidth, maxChange: maxChange}
}

// writeLine prints f's line of --stat: its name, then "Bin" and the sizes
// for a binary file, or the count of changed lines and the bar.
func (l statLayout) writeLine(w io.Writer, f statFile) {
	name := l.nameColumn(f.name)
	if f.binary {
		fmt.Fprintf(w, " %s | %*s", name, l.numberWidth, "Bin")
		if f.added == 0 && f.deleted == 0 {
			fmt.Fprintln(w)
		} else {
			fmt.Fprintf(w, " %d -> %d bytes\n", f.deleted, f.added)
		}
		return
	}
	add, del := l.bar(f.added, f.deleted)
	sep := ""
	if f.added+f.deleted > 0 {
		sep = " "
	}
	fmt.Fprintf(w, " %s | %*d%s%s%s\n", name, l.numberWidth, f.added+f.deleted, sep,
		strings.Repeat("+", int(add)), strings.Repeat("-", int(del)))
}

// nameColumn is name padded to the name column, or, when it is wider,
// "..." and as much of its end as fits, from a "/" if it keeps one.
func (l statLayout) nameColumn(name string) string {
	prefix, room := "", l.nameWidth
	if nameLen := int64(uniseg.StringWidth(name)); l.nameWidth < nameLen {
		prefix, room = "...", max(room-3, 0)
		for nameLen > room {
			_, size := utf8.DecodeRuneInString(name)
			nameLen -= int64(uniseg.StringWidth(name[:size]))
			name = name[size:]
		}
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[i:]
		}
	}
	padding := max(room-int64(uniseg.StringWidth(name)), 0)
	return prefix + name + strings.Repeat(" ", int(padding))
}

// bar is the number of + and - marks for a file of add inserted and del
// deleted lines: the counts themselves when the bar has room for the
// largest change, else scaled down, keeping a mark of each kind when both
// kinds changed.
func (l statLayout) bar(add, del int64) (int64, int64) {
	if l.graphWidth > l.maxChange {
		return add, del
	}
	n := scaleLinear(add+del, l.graphWidth, l.maxChange)
	if n < 2 && add > 0 && del > 0 {
		n = 2
	}
	if add < del {
		add = scaleLinear(add, l.graphWidth, l.maxChange)
		del = n - add
	} else {
		del = scaleLinear(del, l.graphWidth, l.maxChange)
		add = n - del
	}
	return add, del
}

// scaleLinear scales it from 0..most to 0..width, giving every change at
// least one mark (git's scale_linear).
func scaleLinear(it, width, most int64) int64 {
	if it == 0 {
		return 0
	}
	return 1 + it*(width-1)/most
}

func decimalWidth(n int64) int64 { return int64(len(strconv.FormatInt(n, 10))) }

// statSummary is git's closing line of --stat: " 1 file changed, 1
// insertion(+), 5 deletions(-)", leaving out a zero count unless both are.
func statSummary(files, ins, del int64) string {
	s := fmt.Sprintf(" %d file%s changed", files, plural(files))
	if ins != 0 || del == 0 {
		s += fmt.Sprintf(", %d insertion%s(+)", ins, plural(ins))
	}
	if del != 0 || ins == 0 {
		s += fmt.Sprintf(", %d deletion%s(-)", del, plural(del))
	}
	return s
}
