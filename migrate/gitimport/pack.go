package gitimport

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/idxfile"
)

// go-git inflates a packed object of up to 16 KiB (and a delta's
// instructions) whole, without bounding the stream by the size its header
// declares: a zlib bomb in a pack file. So packed objects that are not
// deltas are read here, bounded as loose ones are; before go-git rebuilds
// a delta, resolve inflates, to nowhere, each stream of its chain not
// checked before, and refuses one that inflates past its declared size or
// declares more than the reader allows.

// maxDeltaDepth bounds a delta chain (git writes at most 50 by default,
// 250 with gc --aggressive).
const maxDeltaDepth = 1000

// pack is one pack file of an objects directory, with its index.
type pack struct {
	name    string
	idx     *idxfile.MemoryIndex
	file    *os.File
	checked map[int64]packedInfo // offsets whose streams inflate as declared
}

// loadPacks opens the indexed pack files of every objects directory,
// once. A pack that cannot be read is left out: go-git then fails to find
// its objects, or reads them itself and meets the same damage.
func (o *objectReader) loadPacks() {
	if o.packsLoaded {
		return
	}
	o.packsLoaded = true
	for _, root := range o.loose {
		dir, err := root.Open("pack")
		if err != nil {
			continue
		}
		names, _ := dir.Readdirnames(-1)
		_ = dir.Close() // read only
		for _, n := range names {
			base, ok := strings.CutSuffix(n, ".idx")
			if !ok {
				continue
			}
			if p, err := openPack(root, "pack/"+base); err == nil {
				o.packs = append(o.packs, p)
			}
		}
	}
}

func openPack(root *os.Root, base string) (*pack, error) {
	f, err := root.Open(base + ".idx")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	idx := idxfile.NewMemoryIndex()
	if err := idxfile.NewDecoder(bufio.NewReader(f)).Decode(idx); err != nil {
		return nil, err
	}
	file, err := root.Open(base + ".pack")
	if err != nil {
		return nil, err
	}
	return &pack{name: base, idx: idx, file: file, checked: map[int64]packedInfo{}}, nil
}

// openPackedDirect opens object h from the pack files (fs.ErrNotExist if none
// holds it): its type, size and a reader of its content, not yet bounded.
// An object that is not a delta is inflated here; a delta is rebuilt by
// go-git once the streams of its chain are checked (see resolve).
func (o *objectReader) openPackedDirect(t plumbing.ObjectType, h plumbing.Hash, limit int64) (plumbing.ObjectType, int64, io.ReadCloser, error) {
	o.loadPacks()
	for _, p := range o.packs {
		off, err := p.idx.FindOffset(h)
		if err != nil {
			continue
		}
		r := p.reader(off)
		typ, size, err := packHeader(r)
		switch {
		case err != nil:
			return 0, 0, nil, fmt.Errorf("%s at %d: %w", p.name, off, err)
		case typ != plumbing.OFSDeltaObject && typ != plumbing.REFDeltaObject:
			if size > limit { // not inflated
				return typ, size, io.NopCloser(r), nil
			}
			zr, err := inflate(r)
			if err != nil {
				return 0, 0, nil, fmt.Errorf("%s at %d: %w", p.name, off, err)
			}
			return typ, size, pooled{zr}, nil
		}
		info, err := p.resolve(off, max(limit, maxWholeObject))
		if err != nil {
			return 0, 0, nil, err
		}
		if info.size > limit || (t != plumbing.AnyObject && info.typ != t) {
			return info.typ, info.size, io.NopCloser(r), nil // refused by open
		}
		obj, err := o.st.EncodedObject(info.typ, h)
		if err != nil {
			return 0, 0, nil, err
		}
		if obj.Size() != info.size {
			return 0, 0, nil, fmt.Errorf("its delta says %d bytes, go-git %d", info.size, obj.Size())
		}
		rc, err := obj.Reader()
		return info.typ, info.size, rc, err
	}
	return 0, 0, nil, fs.ErrNotExist
}

// packedInfo is what a pack's headers tell of an object: its type (a
// delta's is its base's) and size.
type packedInfo struct {
	typ  plumbing.ObjectType
	size int64
}

// resolve checks the streams of the object at off and of its delta chain:
// each must inflate to exactly the size its header declares, at most bound
// bytes. Offsets checked before are not inflated again.
func (p *pack) resolve(off, bound int64) (packedInfo, error) {
	var chain []int64
	var info packedInfo
	fail := func(err error) (packedInfo, error) {
		for _, c := range chain {
			delete(p.checked, c)
		}
		return packedInfo{}, err
	}
	for {
		if known, ok := p.checked[off]; ok {
			info = known
			break
		}
		if len(chain) >= maxDeltaDepth {
			return fail(fmt.Errorf("%s: a delta chain longer than %d", p.name, maxDeltaDepth))
		}
		typ, size, base, err := p.checkAt(off, bound)
		if err != nil {
			return fail(fmt.Errorf("%s at %d: %w", p.name, off, err))
		}
		if base < 0 {
			info = packedInfo{typ: typ, size: size}
			p.checked[off] = info
			break
		}
		chain = append(chain, off)
		p.checked[off] = packedInfo{typ: plumbing.InvalidObject, size: size} // the type is its base's
		off = base
	}
	if info.typ == plumbing.InvalidObject {
		return fail(fmt.Errorf("%s: a delta chain that loops", p.name))
	}
	for i := len(chain) - 1; i >= 0; i-- {
		known := p.checked[chain[i]]
		known.typ = info.typ
		p.checked[chain[i]] = known
		info = known
	}
	return info, nil
}

// reader reads the pack from off.
func (p *pack) reader(off int64) *bufio.Reader {
	return bufio.NewReaderSize(io.NewSectionReader(p.file, off, 1<<62), 4096)
}

// checkAt checks the object stream at off: its type, its size (a delta's
// target size) and base, the offset of its delta base (-1 for an object
// that is not a delta).
func (p *pack) checkAt(off, bound int64) (typ plumbing.ObjectType, size, base int64, _ error) {
	r := p.reader(off)
	typ, size, err := packHeader(r)
	if err != nil {
		return 0, 0, 0, err
	}
	base = -1
	switch typ {
	case plumbing.OFSDeltaObject:
		rel, err := ofsOffset(r)
		if err != nil {
			return 0, 0, 0, err
		}
		if base = off - rel; rel <= 0 || base < 0 {
			return 0, 0, 0, fmt.Errorf("delta base offset %d out of the pack", rel)
		}
	case plumbing.REFDeltaObject:
		var h plumbing.Hash
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return 0, 0, 0, err
		}
		if base, err = p.idx.FindOffset(h); err != nil {
			return 0, 0, 0, fmt.Errorf("delta base %s: %w", h, err)
		}
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return 0, 0, 0, fmt.Errorf("object type %d", typ)
	}
	if size > bound {
		return 0, 0, 0, fmt.Errorf("%w: a stream of %d bytes, more than %d", errObjectTooLarge, size, bound)
	}
	zr, err := inflate(r)
	if err != nil {
		return 0, 0, 0, err
	}
	defer release(zr)
	hr := &headReader{r: zr}
	n, err := io.CopyN(io.Discard, hr, size+1)
	switch {
	case n > size:
		return 0, 0, 0, fmt.Errorf("stream is longer than the %d bytes its header declares", size)
	case n < size:
		return 0, 0, 0, fmt.Errorf("stream ends after %d of the %d bytes its header declares: %w", n, size, err)
	case base >= 0:
		// A delta starts with its base's size and its target's.
		b := bytes.NewReader(hr.head[:hr.n])
		_, err1 := binary.ReadUvarint(b)
		target, err2 := binary.ReadUvarint(b)
		if err1 != nil || err2 != nil || target > uint64(bound) {
			return 0, 0, 0, fmt.Errorf("delta target size unreadable or more than %d", bound)
		}
		size = int64(target)
	}
	return typ, size, base, nil
}

// headReader keeps the first bytes read through it.
type headReader struct {
	r    io.Reader
	head [20]byte
	n    int
}

func (h *headReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.n += copy(h.head[h.n:], p[:n])
	return n, err
}

// packHeader reads a pack object's header: its type and declared size.
func packHeader(r io.ByteReader) (plumbing.ObjectType, int64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	typ := plumbing.ObjectType(c >> 4 & 7)
	size := int64(c & 15)
	for shift := 4; c&0x80 != 0; shift += 7 {
		if shift > 55 {
			return 0, 0, errors.New("object size does not fit 63 bits")
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, 0, err
		}
		size |= int64(c&0x7f) << shift
	}
	return typ, size, nil
}

// ofsOffset reads an offset delta's distance back to its base.
func ofsOffset(r io.ByteReader) (int64, error) {
	c, err := r.ReadByte()
	if err != nil {
		return 0, err
	}
	off := int64(c & 0x7f)
	for i := 0; c&0x80 != 0; i++ {
		if i > 8 {
			return 0, errors.New("delta base offset does not fit 63 bits")
		}
		if c, err = r.ReadByte(); err != nil {
			return 0, err
		}
		off = (off+1)<<7 | int64(c&0x7f)
	}
	return off, nil
}
