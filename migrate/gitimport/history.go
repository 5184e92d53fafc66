package gitimport

import (
	"container/heap"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// commit is what the import needs of a git commit.
type commit struct {
	hash    plumbing.Hash
	parents []plumbing.Hash
	tree    plumbing.Hash
	when    time.Time
	reason  string
	pos     int // place in its history, oldest first
}

// maxTagDepth bounds chains of tags pointing at tags.
const maxTagDepth = 16

// history reads every commit reachable from tips (through all parents, and
// through annotated tags) and returns them oldest first: parents before
// children, and among commits whose parents are all placed, the earliest
// first. For a linear history this is the first-parent chain from
// the root to the tip. Tips that are trees or blobs have no commits. Commits
// that cannot be read are returned as problems, and the walk goes on
// without them and their ancestors.
func history(st *objectReader, tips []plumbing.Hash) ([]*commit, []string) {
	var problems []string
	byHash := map[plumbing.Hash]*commit{}
	var found []*commit
	type item struct {
		hash  plumbing.Hash
		isTip bool
		depth int
	}
	stack := make([]item, 0, len(tips))
	for i := len(tips) - 1; i >= 0; i-- {
		stack = append(stack, item{hash: tips[i], isTip: true})
	}
	visited := map[plumbing.Hash]bool{}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if visited[it.hash] {
			continue
		}
		visited[it.hash] = true
		c, err := readCommit(st, it.hash, it.isTip)
		switch {
		case err != nil:
			problems = append(problems, err.Error())
			continue
		case c == nil: // a tree or blob
			continue
		case c.hash != it.hash: // a tag: go on at its target
			if it.depth >= maxTagDepth {
				problems = append(problems, fmt.Sprintf("tag %s: too many tags in a chain", it.hash))
				continue
			}
			stack = append(stack, item{hash: c.hash, isTip: true, depth: it.depth + 1})
			continue
		}
		byHash[c.hash] = c
		found = append(found, c)
		for i := len(c.parents) - 1; i >= 0; i-- {
			stack = append(stack, item{hash: c.parents[i]})
		}
	}
	return order(found, byHash), problems
}

// readCommit reads commit h. For a tip it also accepts a tag (returning a
// commit value holding only the tag's target hash) and trees or blobs (nil).
func readCommit(st *objectReader, h plumbing.Hash, isTip bool) (*commit, error) {
	obj, err := st.read(plumbing.AnyObject, h, maxWholeObject)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	switch obj.Type() {
	case plumbing.CommitObject:
	case plumbing.TagObject:
		if !isTip {
			return nil, fmt.Errorf("commit %s: is a tag", h)
		}
		tag, err := object.DecodeTag(st.st, obj)
		if err != nil {
			return nil, fmt.Errorf("tag %s: %w", h, err)
		}
		return &commit{hash: tag.Target}, nil
	default:
		if !isTip {
			return nil, fmt.Errorf("commit %s: is a %s", h, obj.Type())
		}
		return nil, nil
	}
	c, err := object.DecodeCommit(st.st, obj)
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", h, err)
	}
	when := c.Author.When
	if when.IsZero() || when.Unix() <= 0 {
		when = c.Committer.When
	}
	return &commit{hash: h, parents: c.ParentHashes, tree: c.TreeHash, when: when,
		reason: firstLine(c.Message, string(c.Encoding))}, nil
}

// order sorts commits topologically, oldest first (see history).
func order(found []*commit, byHash map[plumbing.Hash]*commit) []*commit {
	waiting := make(map[*commit]int, len(found)) // parents not yet placed
	children := make(map[*commit][]*commit, len(found))
	for _, c := range found {
		for _, p := range uniq(c.parents) {
			if pc, ok := byHash[p]; ok {
				waiting[c]++
				children[pc] = append(children[pc], c)
			}
		}
	}
	ready := &commitHeap{}
	for _, c := range found {
		if waiting[c] == 0 {
			heap.Push(ready, c)
		}
	}
	out := make([]*commit, 0, len(found))
	for ready.Len() > 0 {
		c := heap.Pop(ready).(*commit)
		c.pos = len(out)
		out = append(out, c)
		for _, ch := range children[c] {
			if waiting[ch]--; waiting[ch] == 0 {
				heap.Push(ready, ch)
			}
		}
	}
	return out
}

func uniq(hs []plumbing.Hash) []plumbing.Hash {
	if len(hs) < 2 {
		return hs
	}
	out := make([]plumbing.Hash, 0, len(hs))
	seen := map[plumbing.Hash]bool{}
	for _, h := range hs {
		if !seen[h] {
			seen[h] = true
			out = append(out, h)
		}
	}
	return out
}

// commitHeap orders ready commits by time, then hash.
type commitHeap []*commit

func (h commitHeap) Len() int { return len(h) }
func (h commitHeap) Less(i, j int) bool {
	if c := h[i].when.Compare(h[j].when); c != 0 {
		return c < 0
	}
	return h[i].hash.String() < h[j].hash.String()
}
func (h commitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *commitHeap) Push(x any)   { *h = append(*h, x.(*commit)) }
func (h *commitHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// firstLine returns the first non-blank line of a commit message, as UTF-8.
// Messages declared ISO-8859-1 (git's i18n.commitEncoding) are converted;
// other invalid bytes become U+FFFD.
func firstLine(msg, encoding string) string {
	msg = strings.TrimLeft(msg, " \t\r\n")
	line, _, _ := strings.Cut(msg, "\n")
	line = strings.TrimRight(line, " \t\r")
	if !utf8.ValidString(line) {
		switch strings.ToLower(encoding) {
		case "iso-8859-1", "iso8859-1", "latin1", "latin-1":
			runes := make([]rune, 0, len(line))
			for i := 0; i < len(line); i++ {
				runes = append(runes, rune(line[i]))
			}
			line = string(runes)
		}
	}
	return strings.ToValidUTF8(line, "\uFFFD")
}
