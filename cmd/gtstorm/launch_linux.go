package main

import (
	"os/exec"
	"syscall"
)

// tieToLauncher makes the kernel send the rank SIGTERM when launch dies,
// even by SIGKILL: the rank then checkpoints and stops as on Ctrl-C.
func tieToLauncher(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
