//go:build unix

package modelfile

import (
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/internal/inputfile/inputfiletest"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
)

// TestPredictImageNotRegular: an image path that is no regular file (a
// link to /dev/zero, which predict used to read until memory ran out; a
// named pipe, whose open used to wait for a writer forever; a directory)
// gets its one-line error in its prediction, and the other images are
// classified.
func TestPredictImageNotRegular(t *testing.T) {
	dir := t.TempDir()
	mnist := models.NewMNISTCNN()
	cfg := train.Default()
	model := filepath.Join(dir, "model.gtck")
	writeModelFile(t, model, cfg, mnist, mnist.Init(3), train.InputSpecOf(cfg, nil, mnist))
	good := writeImage(t, dir, "digit.png", image.NewGray(image.Rect(0, 0, 28, 28)))
	zero, fifo := inputfiletest.NotRegular(t, filepath.Join(dir, "zero.png"), filepath.Join(dir, "fifo.png"))
	sub := filepath.Join(dir, "folder.png")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	images := []string{zero, good, fifo, sub}
	wants := []string{"a character device, want a regular file", "", "a named pipe (FIFO), want a regular file", "a directory, want a regular file"}
	preds, err := Predict(model, images, 3)
	if err == nil || !strings.Contains(err.Error(), "3 of 4 images could not be classified") {
		t.Errorf("error %v, want one saying 3 of 4 images failed", err)
	}
	if len(preds) != len(images) {
		t.Fatalf("%d predictions for %d images", len(preds), len(images))
	}
	for i, want := range wants {
		p := preds[i]
		switch {
		case want == "" && (p.Error != "" || len(p.Top) != 3):
			t.Errorf("%s: %+v, want its top 3 classes", images[i], p)
		case want != "" && (len(p.Top) != 0 || !strings.Contains(p.Error, images[i]+": ") || !strings.Contains(p.Error, want) || strings.Contains(p.Error, "\n")):
			t.Errorf("%s: %+v, want one line naming it and holding %q", images[i], p, want)
		}
	}
}
