package modelfile

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/models"
	"github.com/gtstorm/gtstorm/train"
)

// stroke is the region of strokeImage's digit: away from the border.
var stroke = image.Rect(11, 6, 17, 22)

// strokeImage returns a 28×28 NRGBA image of colour bg with a stroke of
// colour ink.
func strokeImage(bg, ink color.Color) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, 28, 28))
	for y := range 28 {
		for x := range 28 {
			c := bg
			if (image.Point{x, y}).In(stroke) {
				c = ink
			}
			img.Set(x, y, c)
		}
	}
	return img
}

// strokeSample returns the 28×28 sample, channel first, of a stroke of
// bytes ink on a background of bytes bg, one per channel.
func strokeSample(bg, ink []uint8) []uint8 {
	out := make([]uint8, 0, len(bg)*28*28)
	for c := range bg {
		for y := range 28 {
			for x := range 28 {
				v := bg[c]
				if (image.Point{x, y}).In(stroke) {
					v = ink[c]
				}
				out = append(out, v)
			}
		}
	}
	return out
}

// TestImageSample: transparency is composed over white (over black for
// light ink in a grey sample), and a grey sample with a light border is
// inverted to a light digit on a dark background; colour samples never are.
func TestImageSample(t *testing.T) {
	grey, rgb := []int{1, 28, 28}, []int{3, 28, 28}
	type px = []uint8
	palette := image.NewPaletted(image.Rect(0, 0, 28, 28), color.Palette{color.NRGBA{}, color.Black})
	for y := stroke.Min.Y; y < stroke.Max.Y; y++ {
		for x := stroke.Min.X; x < stroke.Max.X; x++ {
			palette.SetColorIndex(x, y, 1)
		}
	}
	for _, c := range []struct {
		name     string
		img      image.Image
		shape    []int
		inverted bool
		bg, ink  px // the sample's, per channel
	}{
		{"light digit on dark", strokeImage(color.Gray{0}, color.Gray{255}), grey, false, px{0}, px{255}},
		{"dark ink on white", strokeImage(color.Gray{255}, color.Gray{0}), grey, true, px{0}, px{255}},
		// Luma 220.355 and 42.28, inverted.
		{"pen on grey paper", strokeImage(color.RGBA{225, 220, 210, 255}, color.RGBA{40, 40, 60, 255}), grey, true, px{35}, px{213}},
		{"border just above half", strokeImage(color.Gray{128}, color.Gray{0}), grey, true, px{127}, px{255}},
		{"border just below half", strokeImage(color.Gray{127}, color.Gray{0}), grey, false, px{127}, px{0}},
		{"black ink on transparency", strokeImage(color.NRGBA{}, color.Black), grey, true, px{0}, px{255}},
		{"black ink on transparent red", strokeImage(color.NRGBA{255, 0, 0, 0}, color.Black), grey, true, px{0}, px{255}},
		{"paletted black ink on transparency", palette, grey, true, px{0}, px{255}},
		// Over white: 0xffff·(1 − 128/255) is 127 on the byte scale.
		{"half-transparent black ink", strokeImage(color.NRGBA{}, color.NRGBA{0, 0, 0, 128}), grey, true, px{0}, px{128}},
		{"white ink on transparency", strokeImage(color.NRGBA{}, color.White), grey, false, px{0}, px{255}},
		{"colour on white", strokeImage(color.White, color.RGBA{0, 0, 255, 255}), rgb, false, px{255, 255, 255}, px{0, 0, 255}},
		{"colour on transparency", strokeImage(color.NRGBA{}, color.RGBA{255, 0, 0, 255}), rgb, false, px{255, 255, 255}, px{255, 0, 0}},
		{"white on transparency in colour", strokeImage(color.NRGBA{}, color.White), rgb, false, px{255, 255, 255}, px{255, 255, 255}},
	} {
		got := make([]uint8, c.shape[0]*28*28)
		inverted := imageSample(c.img, c.shape, got, false)
		if want := strokeSample(c.bg, c.ink); inverted != c.inverted || !slices.Equal(got, want) {
			i := 0 // the first byte that differs, or the last
			for i < len(got)-1 && got[i] == want[i] {
				i++
			}
			t.Errorf("%s: inverted %v, byte %d is %d; want inverted %v, background %v and ink %v",
				c.name, inverted, i, got[i], c.inverted, c.bg, c.ink)
		}
	}
}

// TestImageSampleFolder: the model of an image folder gets an image as
// the folder loader converted its training images (data.ImageBytes):
// never inverted, transparency over black, in grey and in colour.
func TestImageSampleFolder(t *testing.T) {
	grey, rgb := []int{1, 28, 28}, []int{3, 28, 28}
	type px = []uint8
	for _, c := range []struct {
		name    string
		img     image.Image
		shape   []int
		bg, ink px
	}{
		{"dark ink on white", strokeImage(color.Gray{255}, color.Gray{0}), grey, px{255}, px{0}},
		{"light digit on dark", strokeImage(color.Gray{0}, color.Gray{255}), grey, px{0}, px{255}},
		{"black ink on transparency", strokeImage(color.NRGBA{}, color.Black), grey, px{0}, px{0}},
		{"white ink on transparency", strokeImage(color.NRGBA{}, color.White), grey, px{0}, px{255}},
		{"colour on transparency", strokeImage(color.NRGBA{}, color.RGBA{255, 0, 0, 255}), rgb, px{0, 0, 0}, px{255, 0, 0}},
	} {
		got := make([]uint8, c.shape[0]*28*28)
		if imageSample(c.img, c.shape, got, true) {
			t.Errorf("%s: inverted for a folder's model", c.name)
		}
		loader := make([]uint8, len(got))
		data.ImageBytes(c.img, c.shape[0], 28, 28, loader)
		if want := strokeSample(c.bg, c.ink); !slices.Equal(got, want) || !slices.Equal(got, loader) {
			t.Errorf("%s: sample differs from background %v and ink %v, or from the folder loader's", c.name, c.bg, c.ink)
		}
	}
}

// pngHeader returns the start of a PNG, up to its IHDR chunk, of the given
// size, bit depth and colour type: enough for image.DecodeConfig.
func pngHeader(w, h uint32, depth, colorType uint8) []byte {
	body := binary.BigEndian.AppendUint32(nil, w)
	body = binary.BigEndian.AppendUint32(body, h)
	body = append(body, depth, colorType, 0, 0, 0)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = binary.BigEndian.AppendUint32(out, uint32(len(body)))
	typed := append([]byte("IHDR"), body...)
	out = append(out, typed...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(typed))
}

// TestReadImage: predict reads PNG and JPEG only, though more decoders are
// linked in, and bounds the bytes an image decodes to, not its pixels.
func TestReadImage(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var g bytes.Buffer
	if err := gif.Encode(&g, strokeImage(color.Black, color.White), nil); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.png")
	if err := os.WriteFile(big, pngHeader(28, 28, 8, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, maxImageBytes+1<<20); err != nil { // sparse
		t.Fatal(err)
	}
	for _, c := range []struct {
		path, want string
	}{
		{write("anim.gif", g.Bytes()), ": GIF image, want a PNG or JPEG image"},
		// 261 KB of PNG that decode to 256 MiB: 5792² 16-bit RGBA pixels.
		{write("rgba16.png", pngHeader(5792, 5792, 16, 6)), ": PNG of 5792×5792 pixels of 8 bytes decodes to 255 MiB, more than the 128 MiB"},
		{write("grey16.png", pngHeader(5000, 5000, 16, 0)), ": PNG of 5000×5000 pixels of 8 bytes decodes to 190 MiB"},
		// 8-bit RGBA up to data.MaxImagePixels is within the bound: this
		// header passes it and fails as a truncated PNG.
		{write("rgba8.png", pngHeader(5792, 5792, 8, 6)), ": truncated PNG"},
		{write("grey8.png", pngHeader(5000, 5000, 8, 0)), ": truncated PNG"},
		{big, ": file of 129 MiB, more than the 128 MiB"},
		{write("notes.txt", []byte("not an image\n")), ": not a PNG or JPEG image"},
		{filepath.Join(dir, "absent.png"), "absent.png: no such file"},
	} {
		img, err := readImage(c.path)
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("readImage(%s): %v, %v; want one line naming the file and %q", filepath.Base(c.path), img, err, c.want)
		}
	}
	p := writeImage(t, dir, "digit.png", strokeImage(color.Black, color.White))
	if img, err := readImage(p); err != nil || img.Bounds().Dx() != 28 {
		t.Errorf("readImage(%s): %v", p, err)
	}
}

// TestPredictBatch: images that cannot be read are reported in their
// predictions, and the others classified; images with a light background
// are inverted for an MNIST model, and then classified as the light digit
// on dark they become.
func TestPredictBatch(t *testing.T) {
	dir := t.TempDir()
	mnist := models.NewMNISTCNN()
	cfg := train.Default()
	model := filepath.Join(dir, "model.gtck")
	writeModelFile(t, model, cfg, mnist, mnist.Init(3), train.InputSpecOf(cfg, nil, mnist))
	var g bytes.Buffer
	if err := gif.Encode(&g, strokeImage(color.Black, color.White), nil); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "digit.gif"), g.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "huge.png"), pngHeader(5792, 5792, 16, 6), 0o644)
	digit := writeImage(t, dir, "digit.png", strokeImage(color.Black, color.White))
	images := []string{
		digit,
		filepath.Join(dir, "digit.gif"),
		writeImage(t, dir, "paper.png", strokeImage(color.White, color.Black)),
		filepath.Join(dir, "absent.png"),
		writeImage(t, dir, "ink.png", strokeImage(color.NRGBA{}, color.Black)),
		filepath.Join(dir, "huge.png"),
	}
	want := []struct {
		inverted bool
		err      string
	}{{false, ""}, {false, "GIF image"}, {true, ""}, {false, "no such file"}, {true, ""}, {false, "more than the 128 MiB"}}

	alone, err := Predict(model, []string{digit}, 10)
	if err != nil {
		t.Fatal(err)
	}
	preds, err := Predict(model, images, 10)
	if err == nil || !strings.Contains(err.Error(), "3 of 6 images could not be classified") || !strings.Contains(err.Error(), "digit.gif") {
		t.Errorf("Predict's error %v, want one saying 3 of 6 images failed, the first digit.gif", err)
	}
	if len(preds) != len(images) {
		t.Fatalf("%d predictions for %d images", len(preds), len(images))
	}
	for i, p := range preds {
		w := want[i]
		if p.Image != images[i] || p.Inverted != w.inverted {
			t.Errorf("prediction %d: %+v, want image %s, inverted %v", i, p, images[i], w.inverted)
		}
		if w.err != "" {
			if !strings.Contains(p.Error, images[i]) || !strings.Contains(p.Error, w.err) || p.Top != nil {
				t.Errorf("%s: error %q and classes %v, want no classes and an error naming the file with %q", images[i], p.Error, p.Top, w.err)
			}
		} else if p.Error != "" || !slices.Equal(p.Top, alone[0].Top) {
			t.Errorf("%s: error %q, classes %v; want those of the light digit on dark, %v", images[i], p.Error, p.Top, alone[0].Top)
		}
	}

	// All images failing: the predictions say why, and no model runs.
	preds, err = Predict(model, images[1:2], 3)
	if err == nil || len(preds) != 1 || preds[0].Error == "" {
		t.Errorf("Predict of one GIF: %+v, %v", preds, err)
	}
}
