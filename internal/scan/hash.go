package scan

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/internal/osfs"
	"github.com/casckpt/casckpt/internal/statcache"
	"github.com/casckpt/casckpt/manifest"
)

// hashAndBuild reads the files the cache could not vouch for and builds
// the trees (buildTree) at once, the trees on a goroutine of their own:
// each directory's once its files are read, in the order the files are
// read, so that its entries are dropped (unless Options.KeepTree) while
// the others' files are read. An error on either side stops the other.
func (s *scanner) hashAndBuild(top *node, res *Result) (cached bool, _ error) {
	g, ctx := errgroup.WithContext(s.ctx)
	g.Go(func() error { return s.hashAll(ctx) })
	g.Go(func() (err error) {
		cached, err = s.buildTree(ctx, top, res)
		return err
	})
	return cached, g.Wait()
}

// hashAll reads and stores the files the cache could not vouch for,
// closing each directory's hashed once its last queued file is read.
func (s *scanner) hashAll(ctx context.Context) error {
	// Files of 256 KiB and more first, largest first, so the tail of the
	// work is small files; the others by path, so that the files of a
	// directory, which compress well together, meet in the store's blocks
	// (by size, the W3 project's first pack is 3.5% larger), and each
	// directory's are read together, as buildTree waits for them.
	slices.SortFunc(s.toHash, func(a, b queued) int {
		return cmp.Or(cmp.Compare(b.n.size>>18, a.n.size>>18), comparePaths(a, b))
	})
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Workers)
	for i, q := range s.toHash {
		if gctx.Err() != nil {
			break
		}
		s.toHash[i] = queued{} // the queue keeps no node of a directory built and dropped
		g.Go(func() error {
			err := s.hashFile(gctx, hashJob{rel: join(q.d.rel, q.n.name), n: q.n})
			if q.d.queued.Add(-1) == 0 {
				close(q.d.hashed)
			}
			return err
		})
	}
	err := g.Wait()
	s.toHash = nil
	if err == nil {
		err = ctx.Err() // stopped before every file was read
	}
	return err
}

// comparePaths compares the paths of two queued files as strings, on
// the stack when they are short.
func comparePaths(a, b queued) int {
	var ab, bb [256]byte
	ap, bp := appendPath(ab[:0], a), appendPath(bb[:0], b)
	return bytes.Compare(ap, bp)
}

// appendPath appends q's path (join's) to buf.
func appendPath(buf []byte, q queued) []byte {
	if q.d.rel != "" {
		buf = append(append(buf, q.d.rel...), '/')
	}
	return append(buf, q.n.name...)
}

const readAttempts = 3

// hashFile stores one file's chunks. A file that changes while it is read,
// or is another file than the walk saw, is read again; after readAttempts
// tries the last read is kept, with a warning, and its stamp is left
// untrusted. A file that cannot be opened, or is larger than the size limit
// now, is left out, with a warning.
func (s *scanner) hashFile(ctx context.Context, job hashJob) error {
	for attempt := 1; ; attempt++ {
		content, st, stable, err := s.readFile(ctx, job)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var se storeError
			if errors.As(err, &se) {
				return se.err // the store failed, not the file: fail the scan
			}
			if errors.Is(err, errTooBig) {
				s.warn("%s: not captured: it grew past the %d-byte size limit during the scan", job.rel, s.opts.MaxFileSize)
				job.n.kind = 0
				return nil
			}
			if errors.Is(err, errNotRegular) || errors.Is(err, fs.ErrNotExist) { // became something else, or is gone
				s.warn("%s: not captured: %v", job.rel, err)
				job.n.kind = 0
				return nil
			}
			var pe *os.PathError
			if errors.As(err, &pe) { // there, but not readable
				s.warn("%s: not captured: %v", job.rel, err)
				job.n.kind = manifest.KindUnreadable
				return nil
			}
			return fmt.Errorf("%s: %w", job.rel, err)
		}
		if !stable && attempt < readAttempts {
			continue
		}
		if content.Grew { // nothing of it was stored
			s.warn("%s: not captured: it kept growing while being read", job.rel)
			job.n.kind = manifest.KindUnreadable
			return nil
		}
		scanStart := s.start
		if !stable {
			s.warn("%s: changed while being read; captured the last read", job.rel)
			scanStart = 0 // an untrusted stamp: read again next time
		}
		n := job.n
		n.chunks, n.size, n.lines, n.binary = content.Chunks, content.Size, content.Lines, content.Binary
		n.exec = st.Exec()
		fine := s.fine && st.Dev == s.rootStat.Dev // not on a file system mounted below the root
		n.stamp = statcache.FileStamp(content.Size, st.Mtime, st.Ctime, st.Ino, st.Mode, scanStart, fine)
		n.cached = false
		fb := s.hashedB.Add(content.Size)
		fn := s.hashedN.Add(1)
		if s.opts.Progress != nil {
			s.opts.Progress(fn, fb)
		}
		return nil
	}
}

// storeError wraps a failure to store content, which must fail the scan:
// only failures to read the file leave the file out.
type storeError struct{ err error }

func (e storeError) Error() string { return e.err.Error() }
func (e storeError) Unwrap() error { return e.err }

// storePutter marks the errors of the Putter it wraps as storeErrors.
type storePutter struct{ put cas.Putter }

func (p storePutter) Put(ctx context.Context, kind cas.Kind, data []byte) (cas.ID, error) {
	id, err := p.put.Put(ctx, kind, data)
	if err != nil {
		return id, storeError{err}
	}
	return id, nil
}

// readFile reads job's file once, opened beneath the root, and stores its
// chunks, reading no more than the size limit allows. stable reports
// whether it is the file the walk saw and its metadata was the same before
// and after the read; st is the metadata from before.
func (s *scanner) readFile(ctx context.Context, job hashJob) (content manifest.Content, st osfs.Stat, stable bool, err error) {
	p := s.abs(job.rel)
	if testHook != nil {
		testHook("open", job.rel)
	}
	f, err := s.top.openFile(job.rel, p)
	if err != nil {
		return content, st, false, &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer f.Close()
	if st, err = osfs.FileStat(f); err != nil {
		return content, st, false, err
	}
	if st.Type() != osfs.TypeRegular {
		return content, st, false, errNotRegular
	}
	limit := s.opts.MaxFileSize
	if job.n.captured {
		limit = math.MaxInt64
	}
	if st.Size > limit {
		return content, st, false, errTooBig
	}
	if testHook != nil {
		testHook("read", job.rel)
	}
	content, err = manifest.PutContent(ctx, storePutter{s.put}, f, st.Size, limit)
	if err != nil {
		// A read error of PutContent's own names no path yet; a store
		// error is the store's (and may be shared): left as it is.
		var se storeError
		var pe *os.PathError
		if !errors.As(err, &se) && errors.As(err, &pe) && pe.Path == "" {
			pe.Path = p
		}
		return content, st, false, err
	}
	if content.TooBig {
		return content, st, false, errTooBig
	}
	if content.Grew || st.Dev != job.n.dev || st.Ino != job.n.ino {
		return content, st, false, nil
	}
	after, err := osfs.FileStat(f)
	if err != nil {
		return content, st, false, err
	}
	stable = after.Size == st.Size && after.Mtime == st.Mtime && after.Ctime == st.Ctime &&
		after.Ino == st.Ino && after.Mode == st.Mode && content.Size == st.Size
	return content, st, stable, nil
}
