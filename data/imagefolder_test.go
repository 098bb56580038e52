package data

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// solidRGBA is a w×h image of one colour.
func solidRGBA(w, h int, c color.RGBA) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, c)
		}
	}
	return img
}

// grayRamp is a w×h grey image whose pixel (x, y) is 3x + 20y + 7.
func grayRamp(w, h int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetGray(x, y, color.Gray{uint8(3*x + 20*y + 7)})
		}
	}
	return img
}

// writeImage writes img to path (under t's folder) as PNG or, for a .jpg
// or .jpeg name, as JPEG of quality 100.
func writeImage(t *testing.T, path string, img image.Image) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	var err error
	if ext := filepath.Ext(path); ext == ".jpg" || ext == ".jpeg" {
		err = jpeg.Encode(&b, img, &jpeg.Options{Quality: 100})
	} else {
		err = png.Encode(&b, img)
	}
	if err == nil {
		err = os.WriteFile(path, b.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// imageFolderCache points the user's cache folder (and so the image cache)
// at a fresh folder of t's.
func imageFolderCache(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
}

// splitFolder writes DIR/train and DIR/test with two classes, PNG and
// JPEG, grey and colour, odd sizes, and a text file to be skipped.
func splitFolder(t *testing.T) string {
	dir := t.TempDir()
	writeImage(t, filepath.Join(dir, "train/dog/solid.png"), solidRGBA(13, 9, color.RGBA{200, 100, 50, 255}))
	writeImage(t, filepath.Join(dir, "train/dog/ramp.png"), grayRamp(8, 8))
	writeImage(t, filepath.Join(dir, "train/cat/grey.jpg"), &image.Gray{Pix: fill(35, 77), Stride: 5, Rect: image.Rect(0, 0, 5, 7)})
	writeImage(t, filepath.Join(dir, "train/cat/sub/solid.png"), solidRGBA(3, 5, color.RGBA{10, 20, 30, 255}))
	writeImage(t, filepath.Join(dir, "test/cat/one.jpeg"), solidRGBA(7, 11, color.RGBA{0, 255, 0, 255}))
	writeImage(t, filepath.Join(dir, "test/dog/two.PNG"), grayRamp(8, 8))
	for _, p := range []string{"train/cat/notes.txt", "train/.hidden/x.png", "test/dog/.x.png"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte("not an image"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fill returns n copies of v.
func fill(n int, v uint8) []uint8 { return bytes.Repeat([]uint8{v}, n) }

func TestImageFolderSplitLayout(t *testing.T) {
	// Expected values computed here: a solid colour stays that colour at
	// any size; grey at the target size is taken as it is; BT.601 luma.
	luma := func(r, g, b float64) uint8 { return uint8(math.Round(0.299*r + 0.587*g + 0.114*b)) }
	ramp := grayRamp(8, 8).Pix
	for _, tc := range []struct {
		channels  int
		dogSolid  []uint8
		dogRamp   []uint8
		catSolid  []uint8
		testLabel []uint8
	}{
		{3, slices.Concat(fill(64, 200), fill(64, 100), fill(64, 50)), slices.Concat(ramp, ramp, ramp),
			slices.Concat(fill(64, 10), fill(64, 20), fill(64, 30)), []uint8{0, 1}},
		{1, fill(64, luma(200, 100, 50)), ramp, fill(64, luma(10, 20, 30)), []uint8{0, 1}},
	} {
		imageFolderCache(t)
		dir := splitFolder(t)
		train, test, st, err := LoadImageFolder(dir, LoadOptions{ImageSize: 8, Channels: tc.channels})
		if err != nil {
			t.Fatal(err)
		}
		if st.Cached || st.Skipped != 0 {
			t.Errorf("channels %d: first load %+v, want decoded, nothing skipped", tc.channels, st)
		}
		dim := tc.channels * 64
		if train.Len() != 4 || test.Len() != 2 || !slices.Equal(train.Shape, []int{tc.channels, 8, 8}) || train.Classes != 2 {
			t.Fatalf("channels %d: %d training and %d test images of %v in %d classes, want 4, 2, [%d 8 8], 2",
				tc.channels, train.Len(), test.Len(), train.Shape, train.Classes, tc.channels)
		}
		// cat (label 0) sorts before dog (1); files in sorted path order.
		if want := []uint8{0, 0, 1, 1}; !slices.Equal(train.Labels, want) || !slices.Equal(test.Labels, tc.testLabel) {
			t.Errorf("channels %d: labels %v / %v, want %v / %v", tc.channels, train.Labels, test.Labels, want, tc.testLabel)
		}
		px := func(d *Dataset, i int) []uint8 { return d.Bytes[i*dim : (i+1)*dim] }
		for _, c := range []struct {
			name string
			got  []uint8
			want []uint8
		}{{"cat/sub/solid.png", px(train, 1), tc.catSolid}, {"dog/ramp.png", px(train, 2), tc.dogRamp},
			{"dog/solid.png", px(train, 3), tc.dogSolid}, {"test/dog/two.PNG", px(test, 1), tc.dogRamp}} {
			if !slices.Equal(c.got, c.want) {
				t.Errorf("channels %d: %s pixels %v, want %v", tc.channels, c.name, c.got, c.want)
			}
		}
		for _, v := range px(train, 0) { // grey.jpg: a lossy grey 77
			if v < 75 || v > 79 {
				t.Fatalf("channels %d: grey.jpg pixel %d, want about 77", tc.channels, v)
			}
		}
		if names := Builtin().Names(); !slices.Contains(names, "images") {
			t.Fatalf("registry %v lacks images", names)
		}
		spec, _ := Builtin().Spec("images")
		if got := spec.ClassNames(dir, LoadOptions{}); !slices.Equal(got, []string{"cat", "dog"}) {
			t.Errorf("class names %v, want [cat dog]", got)
		}
		if sz := spec.Sizes(dir, LoadOptions{ImageSize: 8, Channels: tc.channels}); sz.Train != 4 || sz.Test != 2 || sz.Classes != 2 || !slices.Equal(sz.Shape, train.Shape) {
			t.Errorf("sizes %+v, want 4 + 2 images of %v in 2 classes", sz, train.Shape)
		}
	}
}

// flatFolder writes DIR/<class> folders of the given sizes, each image a
// distinct grey level.
func flatFolder(t *testing.T, counts map[string]int) string {
	dir := t.TempDir()
	for class, n := range counts {
		for i := range n {
			writeImage(t, filepath.Join(dir, class, string(rune('a'+i))+".png"), solidRGBA(4, 4, color.RGBA{uint8(10*i + 1), 0, 0, 255}))
		}
	}
	return dir
}

// TestImageFolderTrainOnly: DIR/train/<class>/… without DIR/test is the
// split layout with its test set held out, not one class called train;
// a folder of classes, one of them called train, stays a folder of classes.
func TestImageFolderTrainOnly(t *testing.T) {
	imageFolderCache(t)
	for _, tc := range []struct {
		name        string
		counts      map[string]int
		split       float64
		classes     []string
		train, test int
	}{
		{"train only", map[string]int{"train/cat": 4, "train/dog": 4, "train/eel": 4}, 0.25, []string{"cat", "dog", "eel"}, 9, 3},
		{"train only, default split", map[string]int{"train/cat": 10, "train/dog": 10}, 0, []string{"cat", "dog"}, 18, 2},
		{"train and test", map[string]int{"train/cat": 4, "train/dog": 4, "test/cat": 1, "test/dog": 2}, 0, []string{"cat", "dog"}, 8, 3},
		{"a class called train", map[string]int{"train": 4, "car": 4}, 0.25, []string{"car", "train"}, 6, 2},
	} {
		dir := flatFolder(t, tc.counts)
		opt := LoadOptions{ImageSize: 4, Channels: 1, TestSplit: tc.split}
		train, test, _, err := LoadImageFolder(dir, opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if train.Len() != tc.train || test.Len() != tc.test || train.Classes != len(tc.classes) {
			t.Errorf("%s: %d + %d images in %d classes, want %d + %d in %d", tc.name, train.Len(), test.Len(), train.Classes, tc.train, tc.test, len(tc.classes))
		}
		spec := imageFolderSpec()
		if got := spec.ClassNames(dir, opt); !slices.Equal(got, tc.classes) {
			t.Errorf("%s: classes %v, want %v", tc.name, got, tc.classes)
		}
		if sz := spec.Sizes(dir, opt); sz.Train != tc.train || sz.Test != tc.test || sz.Classes != len(tc.classes) {
			t.Errorf("%s: sizes %d + %d in %d classes, want %d + %d in %d", tc.name, sz.Train, sz.Test, sz.Classes, tc.train, tc.test, len(tc.classes))
		}
	}
}

func TestImageFolderHoldOut(t *testing.T) {
	imageFolderCache(t)
	dir := flatFolder(t, map[string]int{"a": 10, "b": 4, "c": 1})
	for _, tc := range []struct {
		split             float64
		train, test       int
		testPerClass      [3]int
		trainPerClassWant [3]int
	}{
		{0.25, 11, 4, [3]int{3, 1, 0}, [3]int{7, 3, 1}}, // round(2.5) = 3, round(1) = 1, one image stays in training
		{0.5, 8, 7, [3]int{5, 2, 0}, [3]int{5, 2, 1}},
	} {
		var first []uint8
		for range 2 { // the second load is from the cache: the same split
			train, test, _, err := LoadImageFolder(dir, LoadOptions{ImageSize: 4, Channels: 1, TestSplit: tc.split})
			if err != nil {
				t.Fatal(err)
			}
			var tr, te [3]int
			for _, l := range train.Labels {
				tr[l]++
			}
			for _, l := range test.Labels {
				te[l]++
			}
			if train.Len() != tc.train || test.Len() != tc.test || te != tc.testPerClass || tr != tc.trainPerClassWant {
				t.Errorf("split %v: %d + %d images, per class %v + %v; want %d + %d, %v + %v", tc.split, train.Len(), test.Len(), tr, te, tc.train, tc.test, tc.trainPerClassWant, tc.testPerClass)
			}
			if first == nil {
				first = slices.Clone(test.Bytes)
			} else if !bytes.Equal(first, test.Bytes) {
				t.Errorf("split %v: another test set on the second load", tc.split)
			}
		}
	}
}

func TestImageFolderCache(t *testing.T) {
	imageFolderCache(t)
	dir := flatFolder(t, map[string]int{"a": 3, "b": 3})
	opt := LoadOptions{ImageSize: 4, Channels: 1, TestSplit: 0.4}
	load := func(wantCached bool) *Dataset {
		t.Helper()
		train, test, st, err := LoadImageFolder(dir, opt)
		if err != nil {
			t.Fatal(err)
		}
		if st.Cached != wantCached {
			t.Fatalf("cached %v, want %v", st.Cached, wantCached)
		}
		train.Bytes = append(train.Bytes, test.Bytes...)
		return train
	}
	first := load(false)
	load(true)
	// The same name, size and time but no longer an image: the cache's
	// pixels are used, so the file is not decoded again.
	p := filepath.Join(dir, "a", "b.png")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, int(fi.Size())), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if again := load(true); !bytes.Equal(again.Bytes, first.Bytes) {
		t.Fatal("pixels from the cache differ from the first load's")
	}
	// A changed image rebuilds the cache.
	writeImage(t, p, solidRGBA(4, 4, color.RGBA{255, 255, 255, 255}))
	later := fi.ModTime().Add(time.Minute)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	changed := load(false)
	if bytes.Equal(changed.Bytes, first.Bytes) || !slices.Contains(changed.Bytes, 255) {
		t.Fatal("the changed image's pixels are not in the rebuilt set")
	}
	load(true)
	opt.Channels = 3 // another shape: another cache
	load(false)
}

func TestImageFolderRefusals(t *testing.T) {
	imageFolderCache(t)
	write := func(dir, rel string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		make func(dir string)
		opt  LoadOptions
		want string // "" for a load that succeeds
	}{
		{"empty class folder", func(dir string) {
			writeImage(t, filepath.Join(dir, "a/x.png"), grayRamp(2, 2))
			os.Mkdir(filepath.Join(dir, "b"), 0o755)
		}, LoadOptions{}, "class folder " + "DIR/b holds no PNG or JPEG images"},
		{"only non-images", func(dir string) {
			writeImage(t, filepath.Join(dir, "a/x.png"), grayRamp(2, 2))
			write(dir, "b/readme.txt", []byte("hello"))
		}, LoadOptions{}, "DIR/b holds no PNG or JPEG images"},
		{"no class folders", func(dir string) {
			writeImage(t, filepath.Join(dir, "x.png"), grayRamp(2, 2))
		}, LoadOptions{}, "image folder DIR holds no class folders"},
		{"corrupt image", func(dir string) {
			writeImage(t, filepath.Join(dir, "a/x.png"), grayRamp(2, 2))
			writeImage(t, filepath.Join(dir, "a/y.png"), grayRamp(2, 2))
			write(dir, "a/bad.png", []byte("\x89PNG\r\n\x1a\nnonsense"))
		}, LoadOptions{}, "DIR/a/bad.png: "},
		{"corrupt image skipped", func(dir string) {
			for _, n := range []string{"a/x.png", "a/y.png", "a/z.png", "b/x.png", "b/y.png"} {
				writeImage(t, filepath.Join(dir, n), grayRamp(2, 2))
			}
			write(dir, "a/bad.jpg", []byte("GIF89a"))
		}, LoadOptions{SkipBad: true, TestSplit: 0.4}, ""},
		{"two channels", func(dir string) {
			writeImage(t, filepath.Join(dir, "a/x.png"), grayRamp(2, 2))
		}, LoadOptions{Channels: 2}, "--channels 2, want 1 (grayscale) or 3 (colour)"},
		{"train and val", func(dir string) {
			writeImage(t, filepath.Join(dir, "train/a/x.png"), grayRamp(2, 2))
			writeImage(t, filepath.Join(dir, "val/a/x.png"), grayRamp(2, 2))
		}, LoadOptions{}, "image folder DIR holds train and val but no test folder"},
		{"test split with a test folder", func(dir string) {
			writeImage(t, filepath.Join(dir, "train/a/x.png"), grayRamp(2, 2))
			writeImage(t, filepath.Join(dir, "test/a/x.png"), grayRamp(2, 2))
		}, LoadOptions{TestSplit: 0.3}, "--test-split 0.3, but DIR/test holds the test set"},
	} {
		dir := t.TempDir()
		tc.make(dir)
		for range 2 { // the second time from the cache, where one was written
			_, _, st, err := LoadImageFolder(dir, tc.opt)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s: %v", tc.name, err)
			case tc.want == "" && st.Skipped != 1:
				t.Errorf("%s: %d skipped, want 1", tc.name, st.Skipped)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), strings.ReplaceAll(tc.want, "DIR", dir)) || strings.Contains(err.Error(), "\n")):
				t.Errorf("%s: error %v, want one line with %q", tc.name, err, tc.want)
			}
		}
	}
}
