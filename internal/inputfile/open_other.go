//go:build !unix

package inputfile

// openFlags adds nothing to the open where the system has no non-blocking
// open.
const openFlags = 0
