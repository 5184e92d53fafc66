package packtest_test

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"

	"github.com/casckpt/casckpt/cas"
	"github.com/casckpt/casckpt/cas/packstore"
	"github.com/casckpt/casckpt/cas/packtest"
)

// TestFaultyPasses: with no fault, or a fault cleared, the wrapper passes
// the suite (the local store's own tests run it too).
func TestFaultyPasses(t *testing.T) {
	packtest.Run(t, func(t *testing.T) cas.PackStore {
		f := packtest.NewFaulty(packstore.NewLocal(t.TempDir(), nil))
		f.Set(packtest.Fault{Op: packtest.OpCreate, N: 1})
		f.Clear()
		return f
	})
}

// newPack stores a pack of a few bytes in s and returns its name.
func newPack(t *testing.T, s cas.PackStore) string {
	t.Helper()
	name := packtest.NewName()
	w, err := s.Create(context.Background(), name)
	if err == nil {
		_, err = w.Write([]byte("pack bytes"))
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// stored reports whether s holds pack name.
func stored(t *testing.T, s cas.PackStore, name string) bool {
	t.Helper()
	_, err := s.Stat(context.Background(), name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// failCall makes one call of a kind through f, whose first call of that
// kind fails, checks that the wrapped store was left as a failed call must
// leave it, and returns the call's error and the pack it named.
type failCall func(t *testing.T, f *packtest.Faulty, inner cas.PackStore, existing string) (string, error)

// TestFaultyFailsEachOp fails the first call of each kind: the call returns
// the chosen error, Fired names it, and the wrapped store was left as a
// failed call must leave it.
func TestFaultyFailsEachOp(t *testing.T) {
	calls := map[packtest.Op]failCall{
		packtest.OpCreate: failCreate, packtest.OpWrite: failWrite, packtest.OpClose: failClose,
		packtest.OpAbort: failAbort, packtest.OpReadAt: failReadAt,
		packtest.OpSync: func(t *testing.T, f *packtest.Faulty, _ cas.PackStore, _ string) (string, error) {
			return "", f.Sync(context.Background())
		},
		packtest.OpOpen: func(t *testing.T, f *packtest.Faulty, _ cas.PackStore, name string) (string, error) {
			_, err := f.Open(context.Background(), name)
			return name, err
		},
		packtest.OpStat: func(t *testing.T, f *packtest.Faulty, _ cas.PackStore, name string) (string, error) {
			_, err := f.Stat(context.Background(), name)
			return name, err
		},
		packtest.OpList: func(t *testing.T, f *packtest.Faulty, _ cas.PackStore, _ string) (string, error) {
			return "", f.List(context.Background(), func(cas.StoredPack) error { t.Fatal("a failed list listed"); return nil })
		},
		packtest.OpRemove: func(t *testing.T, f *packtest.Faulty, inner cas.PackStore, name string) (string, error) {
			err := f.Remove(context.Background(), name)
			if !stored(t, inner, name) {
				t.Fatal("a failed remove removed the pack")
			}
			return name, err
		},
		packtest.OpSetAside: func(t *testing.T, f *packtest.Faulty, inner cas.PackStore, name string) (string, error) {
			err := f.SetAside(context.Background(), name)
			if !stored(t, inner, name) {
				t.Fatal("a failed set aside moved the pack")
			}
			return name, err
		},
		packtest.OpRemoveIncomplete: func(t *testing.T, f *packtest.Faulty, _ cas.PackStore, _ string) (string, error) {
			_, err := f.RemoveIncomplete(context.Background())
			return "", err
		},
	}
	boom := errors.New("boom")
	for op, call := range calls {
		t.Run(string(op), func(t *testing.T) {
			inner := packstore.NewLocal(t.TempDir(), nil)
			f := packtest.NewFaulty(inner)
			existing := newPack(t, f)
			f.Set(packtest.Fault{Op: op, N: 1, Err: boom})
			name, err := call(t, f, inner, existing)
			if !errors.Is(err, boom) {
				t.Fatalf("%s: %v, want the injected error", op, err)
			}
			if got, want := f.Fired(), []string{string(op) + " " + name}; !slices.Equal(got, want) {
				t.Fatalf("fired %q, want %q", got, want)
			}
		})
	}
}

func failCreate(t *testing.T, f *packtest.Faulty, inner cas.PackStore, _ string) (string, error) {
	name := packtest.NewName()
	_, err := f.Create(context.Background(), name)
	if stored(t, inner, name) {
		t.Fatal("a failed create stored the pack")
	}
	return name, err
}

func failWrite(t *testing.T, f *packtest.Faulty, inner cas.PackStore, _ string) (string, error) {
	name := packtest.NewName()
	w, err := f.Create(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write([]byte("x"))
	if aerr := w.Abort(); aerr != nil || stored(t, inner, name) {
		t.Fatalf("abort after a failed write: %v, or the pack is stored", aerr)
	}
	return name, err
}

func failClose(t *testing.T, f *packtest.Faulty, inner cas.PackStore, _ string) (string, error) {
	ctx := context.Background()
	name := packtest.NewName()
	w, err := f.Create(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	err = w.Close()
	if stored(t, inner, name) {
		t.Fatal("a failed close stored the pack")
	}
	if freed, ierr := inner.RemoveIncomplete(ctx); ierr != nil || freed != 0 {
		t.Fatalf("a failed close left %d bytes behind (%v)", freed, ierr)
	}
	return name, err
}

func failAbort(t *testing.T, f *packtest.Faulty, inner cas.PackStore, _ string) (string, error) {
	name := packtest.NewName()
	w, err := f.Create(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	err = w.Abort()
	if aerr := w.Abort(); aerr != nil || stored(t, inner, name) {
		t.Fatalf("a second abort: %v, or the pack is stored", aerr)
	}
	return name, err
}

func failReadAt(t *testing.T, f *packtest.Faulty, _ cas.PackStore, name string) (string, error) {
	r, err := f.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n, err := r.ReadAt(make([]byte, 4), 0)
	if n != 0 {
		t.Fatalf("a failed read read %d bytes", n)
	}
	return name, err
}

// TestFaultyCounts: N counts calls of the fault's kind (of every kind with
// AnyOp) from Set; N = 0 fails each; an unnamed error is ErrInjected.
func TestFaultyCounts(t *testing.T) {
	ctx := context.Background()
	f := packtest.NewFaulty(packstore.NewLocal(t.TempDir(), nil))
	name := newPack(t, f)
	stat := func() error { _, err := f.Stat(ctx, name); return err }

	f.Set(packtest.Fault{Op: packtest.AnyOp, N: 3})
	errs := []error{stat(), f.Sync(ctx), stat(), stat()}
	if errs[0] != nil || errs[1] != nil || !errors.Is(errs[2], packtest.ErrInjected) || errs[3] != nil {
		t.Fatalf("the third call of any kind: %v", errs)
	}
	f.Set(packtest.Fault{Op: packtest.OpStat, N: 2})
	errs = []error{f.Sync(ctx), stat(), f.Sync(ctx), stat(), stat()}
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || !errors.Is(errs[3], packtest.ErrInjected) || errs[4] != nil {
		t.Fatalf("the second stat: %v", errs)
	}
	f.Set(packtest.Fault{Op: packtest.OpStat})
	for range 3 {
		if err := stat(); !errors.Is(err, packtest.ErrInjected) {
			t.Fatalf("every stat: %v", err)
		}
	}
	if err := f.Sync(ctx); err != nil {
		t.Fatalf("sync while stats fail: %v", err)
	}
	f.Clear()
	if err := stat(); err != nil {
		t.Fatalf("stat after Clear: %v", err)
	}
	if got := len(f.Fired()); got != 5 {
		t.Fatalf("%d calls fired, want 5", got)
	}
}
