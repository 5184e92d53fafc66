package statcache

import (
	"testing"
	"time"
)

func TestRacilyCleanStampsNeverMatch(t *testing.T) {
	scan := time.Now().UnixNano()
	hour := int64(time.Hour)
	old := FileStamp(10, scan-hour, scan-hour, 5, 0o100644, scan)
	if old != CurrentStamp(10, scan-hour, scan-hour, 5, 0o100644) {
		t.Fatal("a file modified an hour before its scan is not trusted")
	}
	racy := FileStamp(10, scan-int64(time.Millisecond), scan-hour, 5, 0o100644, scan)
	if racy == CurrentStamp(10, scan-int64(time.Millisecond), scan-hour, 5, 0o100644) {
		t.Fatal("a file modified just before its scan is trusted")
	}
	if old == CurrentStamp(11, scan-hour, scan-hour, 5, 0o100644) {
		t.Fatal("a size change keeps the stamp")
	}
}
