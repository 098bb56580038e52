package main

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
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
