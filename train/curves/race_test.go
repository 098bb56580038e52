//go:build race

package curves

// raceEnabled reports whether the tests run under the race detector, which
// slows single-goroutine numerics 5 to 10 times and finds nothing in them.
const raceEnabled = true
