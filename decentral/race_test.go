//go:build race

package decentral

const raceEnabled = true
