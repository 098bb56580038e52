package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gtstorm/gtstorm/decentral/cluster/certs"
)

// runCerts makes a certificate authority and one certificate per rank for
// the mutual TLS between the ranks of `gtstorm rank`.
func runCerts(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("certs", "certs --ranks K --out DIR [--hosts H1,H2] [--force]\n\n"+
		"Writes ca.pem (and its key ca-key.pem), and rank-R.pem with its key rank-R-key.pem\n"+
		"for each rank R < K: certificates signed by the CA that name the rank (CN\n"+
		"gtstorm-rank-R, URI gtstorm://rank/R), valid for localhost, 127.0.0.1, ::1 and\n"+
		"--hosts. Copy ca.pem and rank R's pair to the host that runs rank R; keep ca-key.pem\n"+
		"private.", stdout)
	ranks := fs.Int("ranks", 0, "number of ranks K")
	out := fs.String("out", "", "folder to write the certificates into")
	hosts := fs.String("hosts", "", "comma-separated host names or IP addresses the ranks are reached at, beyond localhost")
	force := fs.Bool("force", false, "replace the certificates already in --out")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *ranks < 1 || *ranks > certs.MaxRanks:
		return usagef("--ranks %d: want 1 to %d ranks", *ranks, certs.MaxRanks)
	case *out == "":
		return usagef("--out: want the folder to write the certificates into")
	}
	var hl []string
	for _, h := range strings.Split(*hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hl = append(hl, h)
		}
	}
	err := certs.GenerateWith(*out, *ranks, certs.Options{Hosts: hl, Now: time.Now(), Overwrite: *force})
	var exists *certs.ExistsError
	if errors.As(err, &exists) {
		return usagef("--out %s: %v; give --force to replace them", *out, err)
	}
	if err != nil {
		return runError(err)
	}
	fmt.Fprintf(stdout, "wrote a CA and %d rank certificates into %s\n", *ranks, *out)
	return nil
}
