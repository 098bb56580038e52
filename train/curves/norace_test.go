//go:build !race

package curves

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
