package manifest

import "bytes"

// binarySniffLen is how much of a file's start is searched for a NUL byte
// to call it binary, as git does.
const binarySniffLen = 8000

// LineCounter counts lines across the chunks of one file, the way git's
// diffstat counts an added file's insertions: the newlines, plus one for a
// last line without a newline. Content with a NUL byte in its first 8000
// bytes is binary.
type LineCounter struct {
	n       int64
	seen    int64
	binary  bool
	lastNL  bool
	nonZero bool
}

// Write adds the next piece of content. It never fails.
func (c *LineCounter) Write(p []byte) (int, error) {
	if c.seen < binarySniffLen {
		head := p[:min(int64(len(p)), binarySniffLen-c.seen)]
		if bytes.IndexByte(head, 0) >= 0 {
			c.binary = true
		}
	}
	if len(p) > 0 {
		c.n += int64(bytes.Count(p, []byte{'\n'}))
		c.lastNL = p[len(p)-1] == '\n'
		c.nonZero = true
	}
	c.seen += int64(len(p))
	return len(p), nil
}

// Result returns the line count and whether the content is binary (then
// the count is 0).
func (c *LineCounter) Result() (lines int64, binary bool) {
	if c.binary {
		return 0, true
	}
	if c.nonZero && !c.lastNL {
		return c.n + 1, false
	}
	return c.n, false
}

// CountLines returns the line count and binary flag of data.
func CountLines(data []byte) (lines int64, binary bool) {
	var c LineCounter
	_, _ = c.Write(data)
	return c.Result()
}
