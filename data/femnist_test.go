package data

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// leafLevel is the grey level (0..255) test files give pixel k of sample j
// of the writer numbered w; LEAF stores it as level/255.
func leafLevel(w, j, k int) int { return (w*31 + j*17 + k*5) % 256 }

// leafLabel is the label of sample j of writer w.
func leafLabel(w, j int) int { return (w*7 + j*3) % 62 }

// leafName is the name of writer w, in LEAF's style.
func leafName(w int) string { return fmt.Sprintf("f%04d_%02d", w, w%100) }

// pyFloat writes v as Python's json.dump does: the shortest repr, with
// ".0" on whole numbers.
func pyFloat(v float64) string {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// leafJSON returns a LEAF JSON file, as data_to_json.py writes it, of the
// writers numbered ws with counts[i] samples each.
func leafJSON(ws, counts []int) string {
	var b strings.Builder
	quoted := make([]string, len(ws))
	nums := make([]string, len(ws))
	for i, w := range ws {
		quoted[i], nums[i] = strconv.Quote(leafName(w)), strconv.Itoa(counts[i])
	}
	fmt.Fprintf(&b, `{"users": [%s], "num_samples": [%s], "user_data": {`, strings.Join(quoted, ", "), strings.Join(nums, ", "))
	for i, w := range ws {
		if i > 0 {
			b.WriteString(", ")
		}
		var xs, ys []string
		for j := range counts[i] {
			px := make([]string, femnistPixels)
			for k := range px {
				px[k] = pyFloat(float64(leafLevel(w, j, k)) / 255)
			}
			xs = append(xs, "["+strings.Join(px, ", ")+"]")
			ys = append(ys, strconv.Itoa(leafLabel(w, j)))
		}
		fmt.Fprintf(&b, `%q: {"x": [%s], "y": [%s]}`, leafName(w), strings.Join(xs, ", "), strings.Join(ys, ", "))
	}
	b.WriteString("}}")
	return b.String()
}

// leafSet is one test folder: files of writers and their sample counts.
type leafSet [][2][]int

// femnistTrain and femnistTest are the test LEAF sets: several files,
// several writers, odd counts.
var (
	femnistTrain = leafSet{{{3, 1, 4}, {5, 1, 3}}, {{7, 2}, {7, 2}}, {{9}, {1}}}
	femnistTest  = leafSet{{{3, 7}, {2, 1}}}
)

// writeLEAF writes dir/train and dir/test as LEAF does, and returns dir.
func writeLEAF(t *testing.T, dir string, train, test leafSet) string {
	t.Helper()
	for sub, set := range map[string]leafSet{"train": train, "test": test} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
		for i, f := range set {
			name := fmt.Sprintf("all_data_%d_niid_0_keep_0_%s_9.json", i, sub)
			if err := os.WriteFile(filepath.Join(dir, sub, name), []byte(leafJSON(f[0], f[1])), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// checkLEAFSet compares d with the writers of set, in file then users
// order.
func checkLEAFSet(t *testing.T, d *Dataset, set leafSet) {
	t.Helper()
	var names []string
	var labels []uint8
	var writers []int32
	var pix []byte
	for _, f := range set {
		for i, w := range f[0] {
			id := int32(len(names))
			names = append(names, leafName(w))
			for j := range f[1][i] {
				labels, writers = append(labels, uint8(leafLabel(w, j))), append(writers, id)
				for k := range femnistPixels {
					pix = append(pix, byte(255-leafLevel(w, j, k)))
				}
			}
		}
	}
	switch {
	case d.Len() != len(labels) || !slices.Equal(d.Shape, []int{1, 28, 28}) || d.Classes != 62:
		t.Fatalf("%s: %d samples of %v, %d classes; want %d of [1 28 28], 62", d.Name, d.Len(), d.Shape, d.Classes, len(labels))
	case !slices.Equal(d.Labels, labels):
		t.Fatalf("%s labels %v, want %v", d.Name, d.Labels, labels)
	case !slices.Equal(d.Writers, writers) || !slices.Equal(d.WriterNames, names):
		t.Fatalf("%s writers %v %v, want %v %v", d.Name, d.Writers, d.WriterNames, writers, names)
	case !slices.Equal(d.Bytes, pix):
		t.Fatalf("%s pixels differ", d.Name)
	}
	// Dense reads 1 − v, MNIST's convention: ink 1, background 0.
	dst := make([]float32, femnistPixels)
	d.Dense(d.Len()-1, dst)
	last := set[len(set)-1]
	w, j := last[0][len(last[0])-1], last[1][len(last[1])-1]-1
	for k, got := range dst {
		if want := 1 - float64(leafLevel(w, j, k))/255; math.Abs(float64(got)-want) > 1e-6 {
			t.Fatalf("%s sample %d pixel %d = %g, want %g", d.Name, d.Len()-1, k, got, want)
		}
	}
}

// TestLoadFEMNIST loads test-written LEAF files from the folder itself
// and from a data folder's femnist/, and checks the registry entry.
func TestLoadFEMNIST(t *testing.T) {
	root := t.TempDir()
	writeLEAF(t, filepath.Join(root, FEMNISTDir), femnistTrain, femnistTest)
	for _, dir := range []string{filepath.Join(root, FEMNISTDir), root} {
		train, test, err := LoadWith("femnist", dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		checkLEAFSet(t, train, femnistTrain)
		checkLEAFSet(t, test, femnistTest)
	}
	spec, _ := Builtin().Spec("femnist")
	sz := spec.Sizes(root, LoadOptions{})
	if sz.Train != 19 || sz.Test != 3 || sz.Classes != 62 || sz.Bytes != 22*(784+1+4) {
		t.Errorf("sizes %+v, want 19 + 3 samples of 62 classes", sz)
	}
	names := spec.ClassNames(root, LoadOptions{})
	if len(names) != 62 || names[0] != "0" || names[9] != "9" || names[10] != "A" || names[35] != "Z" || names[36] != "a" || names[61] != "z" {
		t.Errorf("class names %v", names)
	}
	files, err := Builtin().Files("femnist", root, LoadOptions{})
	if err != nil || len(files) != 4 || !strings.HasSuffix(files[3], filepath.Join("test", "all_data_0_niid_0_keep_0_test_9.json")) {
		t.Errorf("files %v, %v", files, err)
	}
	if !spec.Writers || spec.Model != "fedavg-cnn" || spec.Remote != nil || !strings.Contains(spec.FetchNote, "preprocess.sh") {
		t.Errorf("spec %+v", spec)
	}
	if _, _, err := LoadFEMNIST(t.TempDir()); err == nil || strings.Contains(err.Error(), "\n") {
		t.Errorf("empty folder: %v", err)
	}
}
