//go:build !amd64.v3

package detmath

// mathFuses: built for plain amd64 (GOAMD64 v1 or v2), math's pure-Go
// functions are not fused.
const mathFuses = false
