package jsondiff

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// MaxSize is the largest version of a document Diff compares (16 MiB).
const MaxSize = 16 << 20

// The ops of a Change.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Change is one path whose value differs between two versions of a
// document.
type Change struct {
	// Path is the value's JSONPath ("$.steps[6]", `$["a b"]`).
	Path string
	// Op is Added, Removed or Changed.
	Op string
	// From and To are the old and the new value as written, without
	// white space: From is nil when added, To when removed.
	From, To json.RawMessage
}

// Diff lists the changes from document a to document b, in the order
// the package doc gives; empty (not nil) when they hold the same values.
// It is false, with no changes, when a or b is not a document.
func Diff(a, b []byte) ([]Change, bool) {
	ta, ok := parse(a)
	if !ok {
		return nil, false
	}
	tb, ok := parse(b)
	if !ok {
		return nil, false
	}
	d := differ{a: ta, b: tb, path: []byte("$"), out: []Change{}}
	d.diff(0, 0)
	return d.out, true
}

// differ collects the changes from tree a to tree b below path.
type differ struct {
	a, b *tree
	path []byte
	out  []Change
}

// diff compares node i of a with node j of b, at d.path.
func (d *differ) diff(i, j int32) {
	x, y := d.a.nodes[i], d.b.nodes[j]
	switch {
	case x.kind != y.kind:
		d.emit(Changed, i, j)
	case x.kind == kindObject:
		d.objects(x, y)
	case x.kind == kindArray:
		d.arrays(x, y)
	case x.kind == kindString && !sameString(d.a.raw(i), d.b.raw(j)),
		x.kind != kindString && !bytes.Equal(d.a.raw(i), d.b.raw(j)):
		d.emit(Changed, i, j)
	}
}

// objects compares two objects key by key (both sorted).
func (d *differ) objects(x, y node) {
	am, bm := d.a.members[x.first:x.first+x.n], d.b.members[y.first:y.first+y.n]
	for len(am) > 0 || len(bm) > 0 {
		n := len(d.path)
		cmp := -1 // only a has the first key left
		switch {
		case len(am) == 0:
			cmp = 1
		case len(bm) > 0:
			cmp = bytes.Compare(d.a.key(am[0]), d.b.key(bm[0]))
		}
		switch {
		case cmp < 0:
			d.path = appendKey(d.path, d.a.key(am[0]))
			d.emit(Removed, am[0].value, -1)
			am = am[1:]
		case cmp > 0:
			d.path = appendKey(d.path, d.b.key(bm[0]))
			d.emit(Added, -1, bm[0].value)
			bm = bm[1:]
		default:
			d.path = appendKey(d.path, d.a.key(am[0]))
			d.diff(am[0].value, bm[0].value)
			am, bm = am[1:], bm[1:]
		}
		d.path = d.path[:n]
	}
}

// arrays compares two arrays position by position.
func (d *differ) arrays(x, y node) {
	for k := range max(x.n, y.n) {
		n := len(d.path)
		d.path = append(strconv.AppendInt(append(d.path, '['), int64(k), 10), ']')
		switch {
		case k >= y.n:
			d.emit(Removed, d.a.members[x.first+k].value, -1)
		case k >= x.n:
			d.emit(Added, -1, d.b.members[y.first+k].value)
		default:
			d.diff(d.a.members[x.first+k].value, d.b.members[y.first+k].value)
		}
		d.path = d.path[:n]
	}
}

// emit adds the change op at d.path from node i of a to node j of b
// (-1: absent).
func (d *differ) emit(op string, i, j int32) {
	c := Change{Path: string(d.path), Op: op}
	if i >= 0 {
		c.From = compact(d.a.raw(i))
	}
	if j >= 0 {
		c.To = compact(d.b.raw(j))
	}
	d.out = append(d.out, c)
}

// sameString says whether the strings a and b (valid, quotes included)
// hold the same text.
func sameString(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	if !bytes.Contains(a, []byte{'\\'}) && !bytes.Contains(b, []byte{'\\'}) {
		return false
	}
	return decodeString(a) == decodeString(b)
}

// compact is raw (valid JSON) without white space.
func compact(raw []byte) json.RawMessage {
	var buf bytes.Buffer
	json.Compact(&buf, raw) // raw was checked: it compacts
	return buf.Bytes()
}

// appendKey appends the path step of member key: ".key" for an
// identifier, else the key as a JSON string in brackets.
func appendKey(path, key []byte) []byte {
	if isIdentifier(key) {
		return append(append(path, '.'), key...)
	}
	return append(appendQuoted(append(path, '['), key), ']')
}

// isIdentifier says whether key is ASCII letters, digits and "_", not
// empty and not starting with a digit.
func isIdentifier(key []byte) bool {
	for i := range len(key) {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return len(key) > 0
}

// appendQuoted appends s as a JSON string: quotes, backslashes and
// control characters escaped, everything else as it is.
func appendQuoted(dst, s []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, r := range string(s) {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < 0x20:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return append(dst, '"')
}
