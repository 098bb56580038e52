//go:build unix

package inputfile

import "syscall"

// openFlags makes opening a named pipe return at once instead of waiting
// for a writer, so that Open can refuse it.
const openFlags = syscall.O_NONBLOCK
