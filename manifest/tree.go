package manifest

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/casckpt/casckpt/cas"
)

// Kind is the type of an Entry.
type Kind uint8

// The entry kinds. Their values are part of the encoding.
const (
	KindFile    Kind = 1
	KindSymlink Kind = 2
	KindDir     Kind = 3
	// KindUnreadable marks a path that was there but could not be read
	// (its permissions, a read error): it was not captured, and nothing is
	// known of it but its name. Diff never reports a change at or below
	// such a path, Walk and Lookup do not show it, so neither a restore nor
	// an undo ever writes or deletes it. Trees without one encode as before.
	KindUnreadable Kind = 4
)

// String returns the contract's name of the kind: file, symlink or dir.
func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindSymlink:
		return "symlink"
	case KindDir:
		return "dir"
	case KindUnreadable:
		return "unreadable"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Entry is one name in a directory.
type Entry struct {
	Name   string
	Kind   Kind
	Exec   bool     // files only: the executable bit
	Size   int64    // files: content length; symlinks: target length
	Lines  int64    // files only: line count as git's diffstat counts it (see CountLines)
	Binary bool     // files only: content looks binary (see CountLines)
	Target string   // symlinks only
	Chunks []cas.ID // files only: content chunks in order
	Tree   cas.ID   // dirs only
}

// Mode returns the file mode an entry is restored with.
func (e Entry) Mode() uint32 {
	switch e.Kind {
	case KindDir:
		return 0o755
	case KindSymlink:
		return 0o777
	}
	if e.Exec {
		return 0o755
	}
	return 0o644
}

// SameBytes reports whether two entries hold the same content: the same
// kind and the same bytes, link target or tree. Their modes may differ.
func (e Entry) SameBytes(o Entry) bool {
	return e.Kind == o.Kind && e.Target == o.Target && e.Tree == o.Tree && slices.Equal(e.Chunks, o.Chunks)
}

// SameContent reports whether two entries would restore identically.
func (e Entry) SameContent(o Entry) bool {
	return e.SameBytes(o) && e.Exec == o.Exec && e.Size == o.Size && e.Lines == o.Lines && e.Binary == o.Binary
}

// Tree is a directory: entries sorted by name, names unique.
type Tree struct {
	Entries []Entry
}

// Lookup returns the entry called name.
func (t Tree) Lookup(name string) (Entry, bool) {
	i, ok := slices.BinarySearchFunc(t.Entries, name, func(e Entry, n string) int { return strings.Compare(e.Name, n) })
	if !ok {
		return Entry{}, false
	}
	return t.Entries[i], true
}

// Sort orders the entries by name, as Encode requires.
func (t *Tree) Sort() {
	slices.SortFunc(t.Entries, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
}

// Limits on stored names and targets, from Linux's NAME_MAX and PATH_MAX.
const (
	MaxNameLen   = 255
	MaxTargetLen = 4095
)

// ValidName checks that name can be stored in a tree and restored safely.
func ValidName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrBadName, name)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: longer than %d bytes", ErrBadName, MaxNameLen)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("%w: %q holds '/' or NUL", ErrBadName, name)
	}
	return nil
}

const encodingVersion = 1

// Entry flags in the encoding.
const (
	flagExec   = 1
	flagBinary = 2
)

// Encode returns the canonical encoding of t. It fails on entries a decoder
// would reject: unsorted or duplicate names, invalid names or kinds.
func Encode(t Tree) ([]byte, error) {
	size := 8
	for _, e := range t.Entries {
		size += 16 + len(e.Name) + len(e.Target) + len(e.Chunks)*cas.IDSize + cas.IDSize
	}
	b := make([]byte, 0, size)
	b = append(b, encodingVersion)
	b = binary.AppendUvarint(b, uint64(len(t.Entries)))
	for i, e := range t.Entries {
		if err := ValidName(e.Name); err != nil {
			return nil, err
		}
		if i > 0 && t.Entries[i-1].Name >= e.Name {
			return nil, fmt.Errorf("manifest: entries not sorted at %q", e.Name)
		}
		var flags byte
		if e.Exec && e.Kind == KindFile {
			flags |= flagExec
		}
		if e.Binary && e.Kind == KindFile {
			flags |= flagBinary
		}
		b = append(b, byte(e.Kind), flags)
		b = binary.AppendUvarint(b, uint64(len(e.Name)))
		b = append(b, e.Name...)
		switch e.Kind {
		case KindFile:
			if e.Size < 0 {
				return nil, fmt.Errorf("manifest: negative size of %q", e.Name)
			}
			if e.Lines < 0 {
				return nil, fmt.Errorf("manifest: negative line count of %q", e.Name)
			}
			b = binary.AppendUvarint(b, uint64(e.Size))
			b = binary.AppendUvarint(b, uint64(e.Lines))
			b = binary.AppendUvarint(b, uint64(len(e.Chunks)))
			for _, c := range e.Chunks {
				b = append(b, c[:]...)
			}
		case KindSymlink:
			if e.Target == "" || len(e.Target) > MaxTargetLen || strings.IndexByte(e.Target, 0) >= 0 {
				return nil, fmt.Errorf("manifest: invalid link target of %q", e.Name)
			}
			b = binary.AppendUvarint(b, uint64(len(e.Target)))
			b = append(b, e.Target...)
		case KindDir:
			b = append(b, e.Tree[:]...)
		case KindUnreadable: // the name alone
		default:
			return nil, fmt.Errorf("manifest: %q has invalid %v", e.Name, e.Kind)
		}
	}
	return b, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrBadTree, what)
	}
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("truncated")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	var canonical [binary.MaxVarintLen64]byte
	if n <= 0 || n != binary.PutUvarint(canonical[:], v) {
		d.fail("bad or overlong varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail("truncated")
		return nil
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

// Decode parses a tree encoding, accepting only the canonical form.
func Decode(b []byte) (Tree, error) {
	d := &decoder{b: b}
	if d.byte() != encodingVersion {
		return Tree{}, fmt.Errorf("%w: unknown version", ErrBadTree)
	}
	count := d.uvarint()
	if count > uint64(len(d.b))/4 { // every entry takes at least 4 bytes
		d.fail("entry count too large")
	}
	t := Tree{Entries: make([]Entry, 0, min(count, 1<<16))}
	for i := uint64(0); i < count && d.err == nil; i++ {
		e := Entry{Kind: Kind(d.byte())}
		flags := d.byte()
		e.Name = string(d.bytes(d.uvarint()))
		if d.err != nil {
			break
		}
		if err := ValidName(e.Name); err != nil {
			d.fail(err.Error())
			break
		}
		if n := len(t.Entries); n > 0 && t.Entries[n-1].Name >= e.Name {
			d.fail("entries not sorted")
			break
		}
		if flags > flagExec|flagBinary || (flags != 0 && e.Kind != KindFile) {
			d.fail("bad flags")
		}
		e.Exec, e.Binary = flags&flagExec != 0, flags&flagBinary != 0
		switch e.Kind {
		case KindFile:
			size := d.uvarint()
			if size > 1<<62 {
				d.fail("size too large")
			}
			e.Size = int64(size)
			lines := d.uvarint()
			if lines > size {
				d.fail("more lines than bytes")
			}
			e.Lines = int64(lines)
			n := d.uvarint()
			if n > uint64(len(d.b))/cas.IDSize {
				d.fail("chunk count too large")
				break
			}
			if n > 0 {
				e.Chunks = make([]cas.ID, n)
				for j := range e.Chunks {
					copy(e.Chunks[j][:], d.bytes(cas.IDSize))
				}
			}
		case KindSymlink:
			target := d.bytes(d.uvarint())
			if len(target) == 0 || len(target) > MaxTargetLen || bytes.IndexByte(target, 0) >= 0 {
				d.fail("bad link target")
			}
			e.Target = string(target)
			e.Size = int64(len(target))
		case KindDir:
			copy(e.Tree[:], d.bytes(cas.IDSize))
		case KindUnreadable:
		default:
			d.fail("bad kind")
		}
		t.Entries = append(t.Entries, e)
	}
	if d.err == nil && len(d.b) != 0 {
		d.fail("trailing bytes")
	}
	if d.err != nil {
		return Tree{}, d.err
	}
	return t, nil
}

// EmptyTreeID is the ID of the tree with no entries.
var EmptyTreeID = func() cas.ID {
	b, _ := Encode(Tree{})
	return cas.Sum(cas.KindTree, b)
}()

// Put encodes t and stores it, returning its ID.
func Put(ctx context.Context, p cas.Putter, t Tree) (cas.ID, error) {
	b, err := Encode(t)
	if err != nil {
		return cas.ID{}, err
	}
	return p.Put(ctx, cas.KindTree, b)
}

// Load reads and decodes tree id. The empty tree needs no stored object.
func Load(ctx context.Context, g cas.Getter, id cas.ID) (Tree, error) {
	if id == EmptyTreeID {
		return Tree{}, nil
	}
	b, err := g.Get(ctx, id)
	if err != nil {
		return Tree{}, fmt.Errorf("tree %s: %w", id.Short(), err)
	}
	t, err := Decode(b)
	if err != nil {
		return Tree{}, fmt.Errorf("tree %s: %w: %w", id.Short(), cas.ErrCorrupt, err)
	}
	return t, nil
}
