package data

import (
	"image/color"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// copyTree copies the regular files under src to dst, keeping names.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestImageFolderInput(t *testing.T) {
	dir := splitFolder(t)
	digest := func(dir string) (*InputFolder, int64, string) {
		t.Helper()
		f, err := Builtin().Folder("images", dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		size, sum, err := f.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return f, size, sum
	}
	f, size, sum := digest(dir)
	// The bytes are those of the six images read, not the skipped files.
	var want int64
	for _, rel := range []string{"train/cat/grey.jpg", "train/cat/sub/solid.png", "train/dog/ramp.png", "train/dog/solid.png", "test/cat/one.jpeg", "test/dog/two.PNG"} {
		st, err := os.Stat(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		want += st.Size()
	}
	if abs, _ := filepath.Abs(dir); f.Path != abs || size != want {
		t.Fatalf("folder input %s of %d bytes, want %s of %d", f.Path, size, abs, want)
	}

	// A copy elsewhere, and a touched file, hold the same data.
	other := t.TempDir()
	copyTree(t, dir, other)
	if _, s2, sum2 := digest(other); s2 != size || sum2 != sum {
		t.Errorf("a copy of the folder: %d bytes %s, want %d %s", s2, sum2, size, sum)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "train/dog/ramp.png"), later, later); err != nil {
		t.Fatal(err)
	}
	if f2, _, sum2 := digest(dir); sum2 != sum || f2.Listing == f.Listing {
		t.Errorf("touched image: digest changed %v (want not), listing changed %v (want so)", sum2 != sum, f2.Listing != f.Listing)
	}

	// One image rewritten with other pixels of the same size is another input.
	writeImage(t, filepath.Join(dir, "train/dog/solid.png"), solidRGBA(13, 9, color.RGBA{201, 100, 50, 255}))
	if _, _, sum2 := digest(dir); sum2 == sum {
		t.Error("an image rewritten with other pixels kept the folder's digest")
	}

	// Datasets read from files have no input folder.
	if f, err := Builtin().Folder("mnist", "", LoadOptions{}); f != nil || err != nil {
		t.Errorf("mnist's input folder: %v, %v; want none", f, err)
	}
}

func TestSurveyImageFolder(t *testing.T) {
	if raceEnabled {
		t.Skip("each survey loads every present built-in dataset in full (MNIST from the module cache) on one goroutine: 50 s under -race, which finds nothing there; the plain go test ./... runs it")
	}
	imageFolderCache(t)
	dir := flatFolder(t, map[string]int{"a": 10, "b": 4, "c": 1})
	survey := func() Status {
		t.Helper()
		st, err := Builtin().Survey(dir)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(st, func(s Status) bool { return s.Name == "images" })
		if i < 0 {
			t.Fatalf("no images line in %v", st)
		}
		return st[i]
	}
	s := survey()
	// Counted from the listing as LoadImageFolder splits it: round(0.1·n)
	// of each class held out, at most n − 1 (so none of c's one image).
	if !s.Present || s.Train == nil || s.Test == nil {
		t.Fatalf("image folder surveyed as %+v", s)
	}
	if !slices.Equal(s.Train.Hist, []int{9, 4, 1}) || !slices.Equal(s.Test.Hist, []int{1, 0, 0}) || !slices.Equal(s.Train.Shape, []int{3, 32, 32}) {
		t.Errorf("train %v, test %v; want [9 4 1] and [1 0 0] of 3x32x32", s.Train, s.Test)
	}
	if !strings.Contains(s.Note, "[a b c]") || !strings.Contains(s.Note, "none yet") {
		t.Errorf("note %q: want the classes and no cache yet", s.Note)
	}
	train, test, _, err := LoadImageFolder(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(train.ClassCounts(), s.Train.Hist) || !slices.Equal(test.ClassCounts(), s.Test.Hist) {
		t.Errorf("loaded %v and %v, surveyed %v and %v", train.ClassCounts(), test.ClassCounts(), s.Train.Hist, s.Test.Hist)
	}
	if s := survey(); !strings.Contains(s.Note, "current") {
		t.Errorf("after a load, note %q: want a current cache", s.Note)
	}
	writeImage(t, filepath.Join(dir, "b", "z.png"), solidRGBA(4, 4, color.RGBA{1, 2, 3, 255}))
	if s := survey(); !strings.Contains(s.Note, "stale") || s.Train.Hist[1]+s.Test.Hist[1] != 5 {
		t.Errorf("after adding an image, %v / %v, note %q: want 5 of b and a stale cache", s.Train, s.Test, s.Note)
	}

	// A folder that is not an image folder gets a line saying how to survey one.
	other := t.TempDir()
	st, err := Builtin().Survey(other)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(st, func(s Status) bool { return s.Name == "images" })
	if i < 0 || st[i].Present || !strings.Contains(st[i].Note, "--data-dir DIR") {
		t.Errorf("a folder without images surveyed as %+v", st)
	}
}
