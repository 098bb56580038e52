package detmath

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// fusedInstr matches a fused multiply-add in the compiler's assembly
// listing (-S): arm64's FMADDS, FMSUBD, FNMSUBS…, and amd64's VFMADD231SD….
var fusedInstr = regexp.MustCompile(`\((/[^)]+\.go):(\d+)\)\s+(VFN?M(ADD|SUB)\d+[PS][SD]|FN?M(ADD|SUB)[SD])\s`)

// TestNoFusedMultiplyAdd compiles the module for arm64, where the compiler
// fuses x*y + z into one instruction, and fails on every fused instruction
// that neither comes from the kernels' deliberate float32 FMA
// (internal/kernels/fma_fused.go) nor from a line calling math.FMA: such a
// line computes other bits on arm64 than on amd64, which never fuses. The
// fix is to convert the product, float64(x*y), which forbids fusing.
// ppc64, s390x, riscv64, loong64 and GOAMD64=v3 fuse by the same rules.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the module (about a minute on a cold build cache)")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goTool, "build", "-gcflags=github.com/gtstorm/gtstorm/...=-S", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOARCH=arm64", "GOOS=linux", "CGO_ENABLED=0")
	var listing bytes.Buffer
	cmd.Stderr = &listing
	if err := cmd.Run(); err != nil {
		t.Fatalf("GOARCH=arm64 go build: %v\n%.2000s", err, listing.String())
	}
	seen := map[string]bool{}
	sources := map[string][]string{} // the module's files by path, as lines, read once
	deliberate := 0
	sc := bufio.NewScanner(&listing)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := fusedInstr.FindStringSubmatch(sc.Text())
		if m == nil || !strings.HasPrefix(m[1], root+string(filepath.Separator)) {
			continue
		}
		file, _ := filepath.Rel(root, m[1])
		if filepath.ToSlash(file) == "internal/kernels/fma_fused.go" {
			deliberate++
			continue
		}
		line, _ := strconv.Atoi(m[2])
		src := sourceLine(t, sources, m[1], line)
		if key := file + ":" + m[2]; !strings.Contains(src, "math.FMA(") && !seen[key] {
			seen[key] = true
			t.Errorf("%s: %s fuses on arm64: convert the product, float64(x*y) or float32(x*y)\n\t%s", key, m[3], strings.TrimSpace(src))
		}
	}
	if deliberate == 0 {
		t.Errorf("no fused instruction from internal/kernels/fma_fused.go: the listing was not parsed (or its fma32 no longer fuses)")
	}
}

// sourceLine returns line n (from 1) of file, reading it into sources the
// first time.
func sourceLine(t *testing.T, sources map[string][]string, file string, n int) string {
	t.Helper()
	lines, ok := sources[file]
	if !ok {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines = strings.Split(string(b), "\n")
		sources[file] = lines
	}
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}
