package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImageFolderTrainPredict trains on an image folder through the binary
// and predicts one of its images with the model file, which names the
// class folders.
func TestImageFolderTrainPredict(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	classes := []string{"apples", "pears"}
	for c, class := range classes {
		for i := range 6 {
			img := image.NewRGBA(image.Rect(0, 0, 9+i, 7))
			for k := range img.Pix {
				img.Pix[k] = uint8(40*i + 100*c)
			}
			var b bytes.Buffer
			if err := png.Encode(&b, img); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, class, string(rune('a'+i))+".png")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	env := []string{"XDG_CACHE_HOME=" + t.TempDir()}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--dataset", "images", "--data-dir", dir, "--image-size", "8", "--test-split", "0.34",
			"--model", "mlp:8", "--nodes", "2", "--iters", "2", "--topology", "complete", "--partition", "iid",
			"--out", out}, ""},
		{[]string{"predict", "--model", filepath.Join(out, "model.gtck"), filepath.Join(dir, "pears", "c.png")}, "pears|apples"},
	} {
		cmd := gtstorm(t, tc.args...)
		cmd.Env = append(cmd.Env, env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("gtstorm %s: %v\n%s%s", tc.args[0], err, stdout.String(), stderr.String())
		}
		t.Logf("gtstorm %s:\n%s", tc.args[0], stdout.String())
		if tc.want == "" {
			continue
		}
		found := false
		for _, w := range strings.Split(tc.want, "|") {
			found = found || strings.Contains(stdout.String(), w)
		}
		if !found {
			t.Errorf("predict printed %q, want a class folder's name (%s)", stdout.String(), tc.want)
		}
	}
	cfg, err := os.ReadFile(filepath.Join(out, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(cfg), `"image_size": 8`) || !strings.Contains(string(cfg), `"test_split": 0.34`) {
		t.Errorf("config.json lacks the image settings:\n%s", cfg)
	}
}

// TestImageFolderFlagRefusals: the image settings are refused in one line
// with another dataset or out of range.
func TestImageFolderFlagRefusals(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--dataset", "mnist", "--image-size", "16"}, "--image-size"},
		{[]string{"train", "--dataset", "images", "--data-dir", t.TempDir(), "--channels", "2"}, "1 (grayscale) or 3 (colour)"},
		{[]string{"train", "--dataset", "images"}, "an image folder"},
	} {
		cmd := gtstorm(t, tc.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err == nil || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: %v, stderr %q, want a refusal with %q", tc.args, err, stderr.String(), tc.want)
		}
	}
}

// writePNGs writes n PNG images of w×h pixels per class under dir/<class>,
// image i of class c filled with 40i + 100c.
func writePNGs(t *testing.T, dir string, classes []string, n, w, h int) {
	t.Helper()
	for c, class := range classes {
		for i := range n {
			img := image.NewRGBA(image.Rect(0, 0, w, h))
			for k := range img.Pix {
				img.Pix[k] = uint8(40*i + 100*c)
			}
			var b bytes.Buffer
			if err := png.Encode(&b, img); err != nil {
				t.Fatal(err)
			}
			writeTestFile(t, filepath.Join(dir, class), string(rune('a'+i))+".png", b.Bytes())
		}
	}
}

// TestImageFolderIsAnInput: data info surveys an image folder, and a run
// records the folder as one input, so that resuming after an image changed
// is refused naming the folder, while the unchanged folder resumes.
func TestImageFolderIsAnInput(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	dir, out := t.TempDir(), filepath.Join(t.TempDir(), "run")
	writePNGs(t, dir, []string{"apples", "pears"}, 5, 6, 5)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"data", "info", "--data-dir", dir}, &stdout, &stderr); code != 0 ||
		!strings.Contains(stdout.String(), "[apples pears]") || !strings.Contains(stdout.String(), "train: 8 samples of 3x32x32, 2 classes [4 4]") {
		t.Fatalf("data info on an image folder: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	args := []string{"train", "--dataset", "images", "--data-dir", dir, "--image-size", "6", "--test-split", "0.4",
		"--model", "mlp:4", "--nodes", "2", "--iters", "2", "--topology", "complete", "--partition", "iid", "--out", out}
	if code := run(args, &stdout, &stderr); code != 0 {
		t.Fatalf("train: exit %d: %s", code, stderr.String())
	}
	sum, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	if !strings.Contains(string(sum), strconv.Quote(abs+string(filepath.Separator))) {
		t.Errorf("summary.json does not record the image folder %s among its inputs:\n%s", abs, sum)
	}
	if code := run([]string{"resume", "--out", out, "--iters", "3"}, &stdout, &stderr); code != 0 {
		t.Fatalf("resume over the same folder: exit %d: %s", code, stderr.String())
	}
	writePNGs(t, dir, []string{"apples"}, 1, 6, 4) // a.png: other pixels, another size
	stderr.Reset()
	code := run([]string{"resume", "--out", out, "--iters", "4"}, &stdout, &stderr)
	if msg := stderr.String(); code == 0 || strings.Count(msg, "\n") != 1 || !strings.Contains(msg, abs) || !strings.Contains(msg, "changed") {
		t.Fatalf("resume after an image changed: exit %d, %q", code, msg)
	}
}

// TestDataInfoImageLayouts: data info lists an image folder's classes in
// each layout (DIR/train without DIR/test held out from train's classes,
// not one class called train), and its help names the image and LEAF
// folders and the partitions that --seed drives.
func TestDataInfoImageLayouts(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, tc := range []struct {
		name   string
		layout func(dir string)
		args   []string
		want   []string
	}{
		{"train only", func(dir string) { writePNGs(t, filepath.Join(dir, "train"), []string{"apples", "pears"}, 10, 4, 4) },
			nil, []string{"2 classes [apples pears]", "train: 18 samples of 3x32x32, 2 classes [9 9]", "test:  2 samples of 3x32x32, 2 classes [1 1]"}},
		{"train and test", func(dir string) {
			writePNGs(t, filepath.Join(dir, "train"), []string{"apples", "pears"}, 3, 4, 4)
			writePNGs(t, filepath.Join(dir, "test"), []string{"apples", "pears"}, 1, 4, 4)
		}, nil, []string{"2 classes [apples pears]", "train: 6 samples", "test:  2 samples"}},
		{"help", func(string) {}, []string{"--help"}, []string{"for femnist a LEAF folder", "for images an image folder (DIR/<class>/… or DIR/train/<class>/…", "natural's order among writers"}},
	} {
		dir := t.TempDir()
		tc.layout(dir)
		args := append([]string{"data", "info", "--data-dir", dir}, tc.args...)
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 0 && tc.args == nil {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr.String())
		}
		for _, want := range tc.want {
			if !strings.Contains(stdout.String()+stderr.String(), want) {
				t.Errorf("%s: data info lacks %q:\n%s%s", tc.name, want, stdout.String(), stderr.String())
			}
		}
	}
}
