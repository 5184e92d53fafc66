package statcache

import (
	"strings"
	"testing"
	"time"
)

func TestRacilyCleanStampsNeverMatch(t *testing.T) {
	scan := time.Now().UnixNano()
	hour := int64(time.Hour)
	old := FileStamp(10, scan-hour, scan-hour, 5, 0o100644, scan, false)
	if old != CurrentStamp(10, scan-hour, scan-hour, 5, 0o100644) {
		t.Fatal("a file modified an hour before its scan is not trusted")
	}
	racy := FileStamp(10, scan-int64(time.Millisecond), scan-hour, 5, 0o100644, scan, false)
	if racy == CurrentStamp(10, scan-int64(time.Millisecond), scan-hour, 5, 0o100644) {
		t.Fatal("a file modified just before its scan is trusted")
	}
	if old == CurrentStamp(11, scan-hour, scan-hour, 5, 0o100644) {
		t.Fatal("a size change keeps the stamp")
	}
}

// On a local file system with nanosecond times a file is trusted from
// FineWindow after its change; elsewhere, and for a ctime of whole seconds
// (an inode that keeps only seconds), from RacyWindow.
func TestFineWindowOnlyForNanosecondTimes(t *testing.T) {
	scan := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC).UnixNano()
	trusted := func(age time.Duration, wholeSecond, fine bool) bool {
		changed := scan - int64(age)
		if wholeSecond {
			changed -= changed % int64(time.Second)
		} else if changed%int64(time.Second) == 0 {
			changed -= 1234
		}
		return FileStamp(10, changed, changed, 5, 0o100644, scan, fine) == CurrentStamp(10, changed, changed, 5, 0o100644)
	}
	for _, tc := range []struct {
		age         time.Duration
		wholeSecond bool
		fine        bool
		want        bool
	}{
		{FineWindow + 50*time.Millisecond, false, true, true},
		{FineWindow - 50*time.Millisecond, false, true, false},
		{time.Millisecond, false, true, false},
		{FineWindow + 50*time.Millisecond, false, false, false},
		{time.Second, true, true, false},
		{RacyWindow + 100*time.Millisecond, false, false, true},
		{RacyWindow + time.Second, true, true, true},
	} {
		if got := trusted(tc.age, tc.wholeSecond, tc.fine); got != tc.want {
			t.Errorf("changed %v before the scan (whole second %v, fine %v): trusted %v, want %v", tc.age, tc.wholeSecond, tc.fine, got, tc.want)
		}
	}
}

// TestNamesHashIsStable pins NamesHasher to the values that stat caches
// on disk hold (computed by the hasher it replaced, which fed BLAKE3 one
// entry at a time): a change would make every project's next snapshot
// read all its files again.
func TestNamesHashIsStable(t *testing.T) {
	long := strings.Repeat("n", 300)
	var manyNames []string
	var manyKinds []uint8
	for i := range 2000 {
		manyNames = append(manyNames, long[:i%300+1])
		manyKinds = append(manyKinds, uint8(i%3+1))
	}
	for _, tc := range []struct {
		names []string
		kinds []uint8
		want  uint64
	}{
		{nil, nil, 0xa6a1f9f5b94913af},
		{[]string{"a", "go.mod", "src"}, []uint8{1, 1, 3}, 0x48719e8d60ecda2b},
		{manyNames, manyKinds, 0xb0212242702490c6},
	} {
		var h NamesHasher
		h.Add("stale", 1)
		h.Reset()
		for i, n := range tc.names {
			h.Add(n, tc.kinds[i])
		}
		if got := h.Sum(); got != tc.want {
			t.Errorf("NamesHasher after Reset, %d names = %#x, want %#x", len(tc.names), got, tc.want)
		}
	}
}
