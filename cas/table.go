package cas

import "encoding/binary"

// tableGuess is how many bytes at a pack's end ReadTableFromTail asks for
// first: the table of a pack of up to about 1,400 objects.
const tableGuess = 64 << 10

// ReadTableFromTail reads and checks the table of a pack of size bytes
// through tail, which returns the pack's last n bytes (a ranged read of a
// remote pack): one call when the table fits in 64 KiB, two otherwise.
// It never reads the pack's objects.
func ReadTableFromTail(size int64, tail func(n int64) ([]byte, error)) ([]PackEntry, error) {
	b, err := tail(min(size, tableGuess))
	if err != nil {
		return nil, err
	}
	if len(b) >= packFooterSize {
		footer := b[len(b)-packFooterSize:]
		entrySize, err := footerEntrySize(footer)
		if err != nil {
			return nil, err
		}
		count := int64(binary.LittleEndian.Uint32(footer))
		if need := count*int64(entrySize) + packFooterSize; need > int64(len(b)) && need <= size-packHeaderSize {
			if b, err = tail(need); err != nil {
				return nil, err
			}
		}
	}
	return DecodeTrailer(b, size)
}
