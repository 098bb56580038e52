//go:build amd64.v3

package detmath

// mathFuses: built with GOAMD64=v3 or above, the compiler fuses x*y + z in
// math's pure-Go functions too, so their bits are no longer amd64's.
const mathFuses = true
