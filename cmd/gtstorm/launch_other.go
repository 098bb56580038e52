//go:build !linux

package main

import "os/exec"

// tieToLauncher does nothing where the kernel cannot signal a child at its
// parent's death: the rank watches the pipe on its stdin instead (see
// followLauncher).
func tieToLauncher(cmd *exec.Cmd) {}
