package detmath

import "golang.org/x/sys/cpu"

// hasFMA reports whether math.Exp takes its FMA path on this amd64 CPU.
func hasFMA() bool { return cpu.X86.HasAVX && cpu.X86.HasFMA }
