package kernels

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedUpToDate regenerates the assembly kernels into a temporary
// directory and checks that the committed files match.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	dir := t.TempDir()
	asm, decl := filepath.Join(dir, "k.s"), filepath.Join(dir, "k.go")
	out, err := exec.Command("go", "run", "./gen", "-asm", asm, "-decl", decl).CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, out)
	}
	for _, f := range [][2]string{{asm, "sgemm_amd64.s"}, {decl, "sgemm_decl_amd64.go"}} {
		got, err := os.ReadFile(f[0])
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(f[1])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run go generate ./internal/kernels", f[1])
		}
	}
}
