package modelfile

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"io"
	"strings"

	"github.com/gtstorm/gtstorm/data"
	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// maxImageBytes bounds the memory an image file may decode to (128 MiB,
// what data.MaxImagePixels of 8-bit RGBA take), so that a small file of
// many 16-bit pixels cannot make predict allocate gigabytes. Files larger
// than that are refused before they are read.
const maxImageBytes = 4 * data.MaxImagePixels

// imageFormats are the formats predict reads, by the names image.Decode
// registers them under. Other decoders linked into the binary (GIF and
// TIFF, which the plotting library registers) are refused.
var imageFormats = map[string]bool{"png": true, "jpeg": true}

// readImage decodes the PNG or JPEG file at path, refusing other formats,
// files that are not regular (a link to /dev/zero, a named pipe) and
// images that would decode to more than maxImageBytes. Its errors name the
// file and say what is wrong with it.
func readImage(path string) (image.Image, error) {
	f, size, err := inputfile.Open(path)
	if err != nil {
		return nil, err // names the file
	}
	defer f.Close()
	if size > maxImageBytes {
		return nil, fmt.Errorf("%s: file of %d MiB, more than the %d MiB an image may take", path, size>>20, maxImageBytes>>20)
	}
	// The size was checked; the limit holds if the file has grown since.
	b, err := io.ReadAll(io.LimitReader(f, maxImageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxImageBytes {
		return nil, fmt.Errorf("%s: grew past the %d MiB an image may take while it was read", path, maxImageBytes>>20)
	}
	// Files whose header does not decode are left to data.DecodeImage,
	// which says what they are.
	if cfg, format, err := image.DecodeConfig(bytes.NewReader(b)); err == nil {
		if err := checkImageConfig(cfg, format); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	img, err := data.DecodeImage(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// checkImageConfig refuses an image header of a format predict does not
// read, or of a size that decodes to more than maxImageBytes.
func checkImageConfig(cfg image.Config, format string) error {
	if !imageFormats[format] {
		return fmt.Errorf("%s image, want a PNG or JPEG image (convert it to PNG)", strings.ToUpper(format))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil // data.DecodeImage refuses it in words
	}
	per := pixelBytes(format, cfg.ColorModel)
	if n := int64(cfg.Width) * int64(cfg.Height) * int64(per); n > maxImageBytes {
		return fmt.Errorf("%s of %d×%d pixels of %d bytes decodes to %d MiB, more than the %d MiB an image may take",
			strings.ToUpper(format), cfg.Width, cfg.Height, per, n>>20, maxImageBytes>>20)
	}
	return nil
}

// pixelBytes returns the most bytes one pixel of an image with color
// model m decodes to. A PNG with a transparent colour (a tRNS chunk)
// decodes grey and RGB to NRGBA, and 16-bit grey and RGB to NRGBA64,
// though DecodeConfig names the model without it; a JPEG's YCbCr is
// counted as unsubsampled.
func pixelBytes(format string, m color.Model) int {
	switch m {
	case color.Gray16Model, color.RGBA64Model, color.NRGBA64Model:
		return 8
	case color.YCbCrModel:
		return 3
	case color.GrayModel:
		if format == "jpeg" {
			return 1
		}
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 4
}

// imageSample writes img into dst as a sample of shape [channels height
// width] (see data.ImageBytes), as the training data of a model of a
// built-in dataset were made, and reports whether it was inverted.
//
// Transparent pixels are composed over white, as a viewer shows them,
// except for a one-channel model given light ink on transparency, which
// is composed over black: either way the ink stays visible. A one-channel
// (MNIST) model then gets an image whose border is light (the mean of the
// outermost pixels of its grey, resized sample above half the scale), such
// as dark ink on white paper, inverted to the light digit on a dark
// background its training data has. Colour (CIFAR)
// samples are natural images, whose light backgrounds are no sign of
// inversion: they are never inverted.
//
// A model trained on an image folder (folder true) saw its images as the
// folder loader converted them, data.ImageBytes alone: transparency over
// black, never inverted. Its images get the same.
func imageSample(img image.Image, shape []int, dst []uint8, folder bool) (inverted bool) {
	channels, height, width := shape[0], shape[1], shape[2]
	if folder {
		data.ImageBytes(img, channels, height, width, dst)
		return false
	}
	if !opaque(img) {
		bg := uint32(0xffff)
		if channels == 1 && lightInk(img) {
			bg = 0
		}
		img = over{img, bg}
	}
	data.ImageBytes(img, channels, height, width, dst)
	if channels != 1 || borderMean(dst, height, width) <= 255.0/2 {
		return false
	}
	for i, v := range dst {
		dst[i] = 255 - v
	}
	return true
}

// opaque reports whether img is known to have no transparent pixel.
func opaque(img image.Image) bool {
	o, ok := img.(interface{ Opaque() bool })
	return ok && o.Opaque()
}

// lightInk reports whether the visible pixels of img are light on
// average: the mean BT.601 luma of their colours, weighted by their
// opacity, is above half the scale. A wholly transparent image has none.
func lightInk(img image.Image) bool {
	r := img.Bounds()
	var luma, alpha float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			// Premultiplied: the luma is already weighted by opacity.
			cr, cg, cb, ca := img.At(x, y).RGBA()
			luma += float64(0.299*float64(cr)) + float64(0.587*float64(cg)) + float64(0.114*float64(cb))
			alpha += float64(ca)
		}
	}
	return alpha > 0 && luma/alpha > 0.5
}

// over is an image composed over an opaque grey background: bg on the
// 16-bit scale, 0 black, 0xffff white.
type over struct {
	image.Image
	bg uint32
}

func (o over) ColorModel() color.Model { return color.RGBA64Model }

func (o over) At(x, y int) color.Color {
	r, g, b, a := o.Image.At(x, y).RGBA()
	k := o.bg * (0xffff - a) / 0xffff // premultiplied: c + bg·(1 − α)
	return color.RGBA64{R: uint16(r + k), G: uint16(g + k), B: uint16(b + k), A: 0xffff}
}

// borderMean returns the mean of the outermost pixels of a height × width
// grey sample, on the 0..255 scale.
func borderMean(pix []uint8, height, width int) float64 {
	var sum, n int
	for y := range height {
		for x := range width {
			if y == 0 || y == height-1 || x == 0 || x == width-1 {
				sum += int(pix[y*width+x])
				n++
			}
		}
	}
	return float64(sum) / float64(n)
}
