package jsondiff

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// maxDepth is how deep a document may nest, as in encoding/json.
const maxDepth = 10000

// kind is a value's JSON type; true and false are kinds of their own so
// that a boolean that flips changes kind.
type kind uint8

const (
	kindNull kind = iota
	kindFalse
	kindTrue
	kindNumber
	kindString
	kindArray
	kindObject
)

// tree is a parsed document, held in flat slices without pointers (so
// that the garbage collector never scans them): nodes[0] is the document.
type tree struct {
	data    []byte
	escaped []byte // the keys written with escapes, decoded
	nodes   []node
	members []member
}

// node is one value: its bytes as written, data[start:end], and, for an
// array or an object, its elements or members, members[first:first+n]
// (an object's sorted by key, one for each key).
type node struct {
	kind       kind
	start, end int32
	first, n   int32
}

// member is an element of an array (no key) or a member of an object:
// its key, (escaped or data)[keyStart:keyEnd], and its value, nodes[value].
type member struct {
	keyStart, keyEnd int32
	value            int32
	escaped          bool
}

// parser reads one document into a tree.
type parser struct {
	tree
	pos   int
	depth int
	stack []member // the members of the open containers
}

// parse reads data as a document; false when it is not one.
func parse(data []byte) (*tree, bool) {
	if len(data) > MaxSize || !utf8.Valid(data) {
		return nil, false
	}
	p := parser{tree: tree{data: data}}
	// Room for every value: each but the first follows a comma or opens
	// a container (an upper bound, as strings hold some), so that the
	// slices never grow.
	n := min(bytes.Count(data, []byte{','})+bytes.Count(data, []byte{'['})+bytes.Count(data, []byte{'{'}), len(data)/2) + 1
	p.nodes, p.members = make([]node, 0, n), make([]member, 0, n)
	p.space()
	if p.pos == len(data) || data[p.pos] != '{' && data[p.pos] != '[' {
		return nil, false
	}
	_, ok := p.value()
	p.space()
	return &p.tree, ok && p.pos == len(data)
}

// raw is the bytes of node i as written.
func (t *tree) raw(i int32) []byte { return t.data[t.nodes[i].start:t.nodes[i].end] }

// key is the decoded key of m.
func (t *tree) key(m member) []byte {
	if m.escaped {
		return t.escaped[m.keyStart:m.keyEnd]
	}
	return t.data[m.keyStart:m.keyEnd]
}

// space skips JSON white space.
func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// next reports whether the next byte is c, and consumes it if so.
func (p *parser) next(c byte) bool {
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// value reads the value at p.pos into a new node and returns its index.
func (p *parser) value() (int32, bool) {
	if p.pos == len(p.data) {
		return 0, false
	}
	i := int32(len(p.nodes))
	p.nodes = append(p.nodes, node{start: int32(p.pos)})
	var k kind
	var ok bool
	switch c := p.data[p.pos]; {
	case c == '{':
		k, ok = kindObject, p.container(i, '}')
	case c == '[':
		k, ok = kindArray, p.container(i, ']')
	case c == '"':
		k, ok = kindString, p.next('"') && p.string()
	case c == '-' || '0' <= c && c <= '9':
		k, ok = kindNumber, p.number()
	case c == 't':
		k, ok = kindTrue, p.literal("true")
	case c == 'f':
		k, ok = kindFalse, p.literal("false")
	case c == 'n':
		k, ok = kindNull, p.literal("null")
	}
	p.nodes[i].kind, p.nodes[i].end = k, int32(p.pos)
	return i, ok
}

// literal reads the word w.
func (p *parser) literal(w string) bool {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(w)) {
		return false
	}
	p.pos += len(w)
	return true
}

// container reads the array or object (closed by end) of node i.
func (p *parser) container(i int32, end byte) bool {
	if p.depth++; p.depth > maxDepth {
		return false
	}
	defer func() { p.depth-- }()
	mark := len(p.stack)
	p.pos++
	p.space()
	for !p.next(end) {
		if len(p.stack) > mark && !p.next(',') {
			return false
		}
		p.space()
		var m member
		if end == '}' && !p.memberKey(&m) {
			return false
		}
		v, ok := p.value()
		if !ok {
			return false
		}
		m.value = v
		p.stack = append(p.stack, m)
		p.space()
	}
	items := p.stack[mark:]
	if end == '}' {
		items = p.byKey(items)
	}
	p.nodes[i].first, p.nodes[i].n = int32(len(p.members)), int32(len(items))
	p.members = append(p.members, items...)
	p.stack = p.stack[:mark]
	return true
}

// memberKey reads a member's key and its colon into m.
func (p *parser) memberKey(m *member) bool {
	start := p.pos
	if !p.next('"') || !p.string() {
		return false
	}
	raw := p.data[start:p.pos]
	m.keyStart, m.keyEnd = int32(start+1), int32(p.pos-1)
	if slices.Contains(raw, '\\') {
		m.escaped, m.keyStart = true, int32(len(p.escaped))
		p.escaped = append(p.escaped, decodeString(raw)...)
		m.keyEnd = int32(len(p.escaped))
	}
	p.space()
	if !p.next(':') {
		return false
	}
	p.space()
	return true
}

// byKey sorts an object's members by key and keeps the last of each key.
func (p *parser) byKey(items []member) []member {
	slices.SortStableFunc(items, func(a, b member) int { return bytes.Compare(p.key(a), p.key(b)) })
	out := items[:0]
	for j, m := range items {
		if j+1 < len(items) && bytes.Equal(p.key(items[j+1]), p.key(m)) {
			continue // a later member of the same key wins
		}
		out = append(out, m)
	}
	return out
}

// string reads a string (p.pos just after its opening quote), checking
// its escapes.
func (p *parser) string() bool {
	for ; p.pos < len(p.data); p.pos++ {
		switch c := p.data[p.pos]; {
		case c == '"':
			p.pos++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			p.pos++
			if p.pos == len(p.data) {
				return false
			}
			switch p.data[p.pos] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if !p.hex4() {
					return false
				}
			default:
				return false
			}
		}
	}
	return false
}

// hex4 checks the four hex digits of a \u escape (p.pos at the u) and
// leaves p.pos at the last.
func (p *parser) hex4() bool {
	if p.pos+4 >= len(p.data) {
		return false
	}
	for _, c := range p.data[p.pos+1 : p.pos+5] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	p.pos += 4
	return true
}

// number reads a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() bool {
	p.next('-')
	if !p.next('0') && !p.digits() {
		return false
	}
	if p.next('.') && !p.digits() {
		return false
	}
	if p.next('e') || p.next('E') {
		if !p.next('+') {
			p.next('-')
		}
		return p.digits()
	}
	return true
}

// digits reads one or more decimal digits.
func (p *parser) digits() bool {
	start := p.pos
	for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
		p.pos++
	}
	return p.pos > start
}

// decodeString is what the string raw (quotes included, valid) holds.
func decodeString(raw []byte) string {
	inner := raw[1 : len(raw)-1]
	if !slices.Contains(inner, '\\') {
		return string(inner)
	}
	var s string
	json.Unmarshal(raw, &s) // raw was checked: it decodes
	return s
}
