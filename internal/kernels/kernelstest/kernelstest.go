// Package kernelstest runs, for the same-bits tests of the packages built
// on internal/kernels, one child process of the test binary per kernel set
// this CPU runs, and collects the digest each prints.
package kernelstest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/kernels"
)

// EnvEmulator names a program that runs the child processes, for a test
// binary cross-compiled and run under qemu's user mode (e.g.
// qemu-aarch64-static).
const EnvEmulator = "GTSTORM_TEST_EMULATOR"

// Digests runs the test named test (the caller) once per kernel set in a
// child process with childEnv set and kernels.EnvKernels naming the set,
// and returns each set's digest. In the child it prints the digest that
// digest computes and returns nil, false: the caller then returns.
func Digests(t *testing.T, test, childEnv string, digest func(testing.TB) string) (map[string]string, bool) {
	t.Helper()
	if os.Getenv(childEnv) != "" {
		fmt.Printf("digest %s %s\n", kernels.Name(), digest(t))
		return nil, false
	}
	digests := map[string]string{}
	for _, set := range kernels.Available() {
		args := []string{os.Args[0], "-test.run=^" + test + "$", "-test.count=1"}
		if emu := os.Getenv(EnvEmulator); emu != "" {
			args = append([]string{emu}, args...)
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), childEnv+"=1", kernels.EnvKernels+"="+set)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", set, err, out)
		}
		var name, d string
		for _, line := range strings.Split(string(out), "\n") {
			if _, err := fmt.Sscanf(line, "digest %s %s", &name, &d); err == nil {
				break
			}
		}
		if name != set || d == "" {
			t.Fatalf("%s: no digest from the child process:\n%s", set, out)
		}
		digests[set] = d
	}
	return digests, true
}
