package packtest

import (
	"testing"

	"github.com/casckpt/casckpt/cas"
)

// Run runs the conformance suite: each subtest calls newStore for a fresh,
// empty store. Subtests run one after the other; some of them use the
// store from many goroutines.
func Run(t *testing.T, newStore func(t *testing.T) cas.PackStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s cas.PackStore)
	}{
		{"CreateRead", testCreateRead},
		{"EmptyPack", testEmptyPack},
		{"NotVisibleBeforeClose", testNotVisibleBeforeClose},
		{"Abort", testAbort},
		{"DuplicateName", testDuplicateName},
		{"DuplicateWriters", testDuplicateWriters},
		{"Missing", testMissing},
		{"InvalidName", testInvalidName},
		{"StatListRemove", testStatListRemove},
		{"ListStops", testListStops},
		{"SetAside", testSetAside},
		{"ReadPastEnd", testReadPastEnd},
		{"ReaderClosed", testReaderClosed},
		{"RemoveIncomplete", testRemoveIncomplete},
		{"Canceled", testCanceled},
		{"Concurrent", testConcurrent},
		{"SyncAfterManyCloses", testSyncAfterManyCloses},
		{"OpenSized", testOpenSized},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newStore(t)) })
	}
}
