package packstore

import "errors"

// errEnded: Write, Close or Abort after the writer closed or aborted.
var errEnded = errors.New("pack store: the pack writer has already ended")
