//go:build !race

package train

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
