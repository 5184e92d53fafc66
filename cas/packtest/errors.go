package packtest

import "errors"

// ErrInjected is the error of a Fault that names none.
var ErrInjected = errors.New("packtest: injected fault")
