//go:build !race

package decentral

const raceEnabled = false
