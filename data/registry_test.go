package data

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// toyFile is the toy dataset's file in its folder: a line "label x0 x1"
// per sample.
const toyFile = "toy.txt"

// loadToy reads the toy format: every line a label in [0, 3) and two
// feature values.
func loadToy(dir string, _ LoadOptions) (*Dataset, *Dataset, error) {
	p := filepath.Join(dir, toyFile)
	b, err := inputfile.Read(p, 1<<20, "a toy data file")
	if err != nil {
		return nil, nil, fmt.Errorf("toy: %w", err)
	}
	d := &Dataset{Name: "toy-train", Shape: []int{2}, Classes: 3}
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var label int
		var x0, x1 float32
		if _, err := fmt.Sscan(line, &label, &x0, &x1); err != nil || label < 0 || label >= 3 {
			return nil, nil, fmt.Errorf("load %s: line %d: want a label in [0, 3) and two values", p, i+1)
		}
		d.Labels = append(d.Labels, uint8(label))
		d.Floats = append(d.Floats, x0, x1)
	}
	return d, nil, nil
}

// toySpec is a dataset added outside the built-ins, as docs/ARCHITECTURE.md
// describes: one entry naming its loader, files, sizes and survey.
func toySpec() Spec {
	return Spec{
		Name:  "toy",
		Model: "mlp:4",
		Load:  loadToy,
		Files: func(dir string, _ LoadOptions) ([]string, error) { return []string{filepath.Join(dir, toyFile)}, nil },
		Sizes: func(string, LoadOptions) Sizes {
			return Sizes{Train: 6, Shape: []int{2}, Classes: 3, Bytes: 6 * 9, Detail: "toy, 6 samples"}
		},
		Survey: func(dir string) []Status {
			p := filepath.Join(dir, toyFile)
			return []Status{statusOf("toy", p, dir, "toy text file", false, func() (*Dataset, *Dataset, error) { return loadToy(dir, LoadOptions{}) })}
		},
		ClassNames: func(string, LoadOptions) []string { return []string{"a", "b", "c"} },
	}
}

// TestRegistryAddsADataset adds the toy dataset to a copy of the built-in
// registry: it loads, lists its files and surveys through the registry,
// while the built-in registry stays as it was.
func TestRegistryAddsADataset(t *testing.T) {
	if raceEnabled {
		t.Skip("the survey loads the 60,000 MNIST images of the module cache in full on one goroutine: slow under -race, which finds nothing there; the plain go test ./... runs it")
	}
	dir := t.TempDir()
	var text strings.Builder
	for i := range 6 {
		text.WriteString(strconv.Itoa(i%3) + " " + strconv.Itoa(i) + " 0.5\n")
	}
	writeFile(t, dir, toyFile, []byte(text.String()))
	reg, err := Builtin().With(toySpec())
	if err != nil {
		t.Fatal(err)
	}
	if names := reg.Names(); !slices.Equal(names, append(Builtin().Names(), "toy")) {
		t.Fatalf("names %v", names)
	}
	if slices.Contains(Builtin().Names(), "toy") || slices.Contains(Names(), "toy") {
		t.Fatal("adding to a copy changed the built-in registry")
	}
	train, test, err := reg.LoadWith("toy", dir, LoadOptions{})
	if err != nil || train.Len() != 6 || test != nil || train.Labels[4] != 1 {
		t.Fatalf("load: %v %v %v", train, test, err)
	}
	files, err := reg.Files("toy", dir, LoadOptions{})
	if err != nil || !slices.Equal(files, []string{filepath.Join(dir, toyFile)}) {
		t.Fatalf("files %v, %v", files, err)
	}
	st, err := reg.Survey(dir)
	if err != nil || st[len(st)-1].Name != "toy" || st[len(st)-1].Train.Samples != 6 {
		t.Fatalf("survey: %v", err)
	}
	if _, _, err := Builtin().LoadWith("toy", dir, LoadOptions{}); err == nil || !strings.Contains(err.Error(), `unknown dataset "toy"`) {
		t.Fatalf("the built-ins load toy: %v", err)
	}
}

// TestRegistryRefusals refuses incomplete entries and a name given twice.
func TestRegistryRefusals(t *testing.T) {
	noLoader := toySpec()
	noLoader.Load = nil
	remote := toySpec()
	remote.Remote = &Remote{Name: "other"}
	cases := []struct {
		name string
		spec Spec
		want string
	}{
		{"no name", Spec{}, "without a name"},
		{"no loader", noLoader, "toy: want a loader"},
		{"a built-in name", func() Spec { s := toySpec(); s.Name = "mnist"; return s }(), "mnist registered twice"},
		{"another's download", remote, "its download is called other"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Builtin().With(c.spec)
			wantErr(t, err, c.want)
		})
	}
}

// TestBuiltinEntries checks every built-in entry: complete, with sizes of
// a sample shape and class count, and a download named after it.
func TestBuiltinEntries(t *testing.T) {
	want := []string{"mnist", "fashion-mnist", "cifar10", "cifar100", "images", "libsvm", "a9a", "ijcnn1", "rcv1", "femnist"}
	if !slices.Equal(Names(), want) {
		t.Fatalf("names %v, want %v", Names(), want)
	}
	images := map[string]struct {
		shape   []int
		classes int
		model   string
	}{
		"mnist":         {[]int{1, 28, 28}, 10, "mnist-cnn"},
		"fashion-mnist": {[]int{1, 28, 28}, 10, "mnist-cnn"},
		"cifar10":       {[]int{3, 32, 32}, 10, "cifar-cnn"},
		"cifar100":      {[]int{3, 32, 32}, 100, "cifar-cnn"},
		"femnist":       {[]int{1, 28, 28}, 62, "fedavg-cnn"},
	}
	for _, name := range want {
		s, _ := Builtin().Spec(name)
		img, ok := images[name]
		if name == "images" { // sizes of a folder; see TestImageFolderSplitLayout
			continue
		}
		if !ok {
			if !s.LogReg || s.Model != "logreg" {
				t.Errorf("%s: want LibSVM data and logreg, got %+v", name, s)
			}
			continue
		}
		sz := s.Sizes("", LoadOptions{})
		if s.LogReg || s.Model != img.model || !slices.Equal(sz.Shape, img.shape) || sz.Classes != img.classes || sz.Bytes <= 0 {
			t.Errorf("%s: model %s, sizes %+v", name, s.Model, sz)
		}
	}
	s, _ := Builtin().Spec("cifar100")
	if sz := s.Sizes("", LoadOptions{CoarseLabels: true}); sz.Classes != 20 || !s.CoarseLabels {
		t.Errorf("cifar100 --coarse-labels: %d classes", sz.Classes)
	}
}
