package main

import (
	"flag"

	"github.com/gtstorm/gtstorm/internal/memlimit"
)

// sizeFlag returns a flag value for a byte size such as 8GiB, stored in *p
// (see memlimit.ParseSize).
func sizeFlag(p *int64) flag.Value { return memlimit.NewFlag(p) }
