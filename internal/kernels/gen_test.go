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
	files := [][2]string{ // flag, committed file
		{"asm", "sgemm_amd64.s"}, {"decl", "sgemm_decl_amd64.go"},
		{"asm256", "sgemm256_amd64.s"}, {"decl256", "sgemm256_decl_amd64.go"},
		{"asmneon", "sgemm_arm64.s"}, {"declneon", "sgemm_decl_arm64.go"},
	}
	args := []string{"run", "./gen"}
	for _, f := range files {
		args = append(args, "-"+f[0], filepath.Join(dir, f[1]))
	}
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, out)
	}
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(dir, f[1]))
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
