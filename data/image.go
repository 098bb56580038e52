package data

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // register the JPEG decoder with image.Decode
	_ "image/png"  // register the PNG decoder with image.Decode
	"io"
	"math"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// ImageInput describes the samples a model was trained on, so that image
// files can be turned into exactly such samples.
type ImageInput struct {
	Shape   []int // [channels height width]: [1 28 28] for MNIST, [3 32 32] for CIFAR-10
	Classes int   // the number of classes (the loaded samples' labels are all 0)
	// Mean and Std standardise each channel as the training data's do (see
	// Dataset); nil for plain [0,1] scaling.
	Mean, Std []float32
}

// MaxImagePixels bounds the pixels of an image file ReadImage decodes
// (32 Mi, more than an 8K frame), so that a corrupt or hostile header
// cannot make it allocate gigabytes.
const MaxImagePixels = 1 << 25

// maxImageFile bounds the size of an image file ReadImage reads: what
// MaxImagePixels of 8-bit RGBA take, more than any PNG or JPEG of that many
// pixels needs in practice.
const maxImageFile = 4 * MaxImagePixels

// Check validates the description: 1 or 3 channels, a positive size, 1 to
// 256 classes, and either no standardisation or a finite mean and positive
// deviation per channel.
func (in ImageInput) Check() error {
	if len(in.Shape) != 3 || in.Shape[0] != 1 && in.Shape[0] != 3 || in.Shape[1] < 1 || in.Shape[2] < 1 {
		return fmt.Errorf("image input of shape %v, want [1 or 3, height, width]", in.Shape)
	}
	if in.Classes < 1 || in.Classes > 256 {
		return fmt.Errorf("image input with %d classes, want 1 to 256", in.Classes)
	}
	if in.Mean == nil && in.Std == nil {
		return nil
	}
	if len(in.Mean) != in.Shape[0] || len(in.Std) != in.Shape[0] {
		return fmt.Errorf("image input of %d channels with %d means and %d standard deviations", in.Shape[0], len(in.Mean), len(in.Std))
	}
	for c := range in.Mean {
		m, s := float64(in.Mean[c]), float64(in.Std[c])
		if math.IsNaN(m) || math.IsInf(m, 0) || !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("image input channel %d: mean %v and standard deviation %v, want finite values and a positive deviation", c, m, s)
		}
	}
	return nil
}

// ReadImage decodes a PNG or JPEG file, a regular file of at most
// maxImageFile bytes (see inputfile.Read: a link to /dev/zero or a named
// pipe is refused before it is read). Its errors name the file and say what
// is wrong with it.
func ReadImage(path string) (image.Image, error) {
	b, err := inputfile.Read(path, maxImageFile, "an image file")
	if err != nil {
		return nil, err // names the file
	}
	img, err := DecodeImage(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// DecodeImage decodes a PNG or JPEG image held in b, refusing one without
// pixels or with more than MaxImagePixels.
func DecodeImage(b []byte) (image.Image, error) {
	const want = "want a PNG or JPEG image"
	if len(b) == 0 {
		return nil, fmt.Errorf("empty file, %s", want)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if errors.Is(err, image.ErrFormat) {
		return nil, fmt.Errorf("not a PNG or JPEG image (%s)", sniff(b))
	}
	if err != nil {
		if w, h, ok := pngSize(b); ok && (w == 0 || h == 0) {
			return nil, fmt.Errorf("PNG of %d×%d pixels, want a non-empty image", w, h)
		}
		return nil, decodeError(format, b, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("%s of %d×%d pixels, want a non-empty image", formatName(format), cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > MaxImagePixels {
		return nil, fmt.Errorf("%s of %d×%d pixels, more than the %d this reads", formatName(format), cfg.Width, cfg.Height, MaxImagePixels)
	}
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, decodeError(format, b, err)
	}
	if r := img.Bounds(); r.Empty() {
		return nil, fmt.Errorf("%s of %d×%d pixels, want a non-empty image", formatName(format), r.Dx(), r.Dy())
	}
	return img, nil
}

// decodeError describes a decoder's error on b: truncation (the decoder
// met the end of the file, or the file lacks the end marker of its format)
// in words, anything else as the decoder says it.
func decodeError(format string, b []byte, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || !hasEnd(format, b) {
		return fmt.Errorf("truncated %s: the file ends before its image data does", formatName(format))
	}
	return fmt.Errorf("corrupt %s: %v", formatName(format), err)
}

// hasEnd reports whether b ends as a complete file of the format does: a
// PNG with its IEND chunk, a JPEG with its end-of-image marker.
func hasEnd(format string, b []byte) bool {
	switch format {
	case "png":
		return bytes.HasSuffix(b, []byte("\x00\x00\x00\x00IEND\xaeB`\x82"))
	case "jpeg":
		return bytes.HasSuffix(b, []byte{0xff, 0xd9})
	}
	return true
}

func formatName(format string) string {
	switch format {
	case "png":
		return "PNG"
	case "jpeg":
		return "JPEG"
	case "":
		return "image"
	}
	return format
}

// sniff names what b looks like when it is no image this package reads.
func sniff(b []byte) string {
	for _, f := range []struct{ magic, name string }{
		{"GIF8", "GIF"}, {"BM", "BMP"}, {"II*\x00", "TIFF"}, {"MM\x00*", "TIFF"}, {"\x00\x00\x01\x00", "ICO"},
	} {
		if bytes.HasPrefix(b, []byte(f.magic)) {
			return "it looks like a " + f.name + " image; convert it to PNG"
		}
	}
	if len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP" {
		return "it looks like a WebP image; convert it to PNG"
	}
	n := min(len(b), 512)
	text := true
	for _, c := range b[:n] {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			text = false
			break
		}
	}
	if text {
		return "the file holds text"
	}
	return fmt.Sprintf("the file starts with bytes % x", b[:min(n, 8)])
}

// pngSize returns the width and height in a PNG's IHDR chunk, which the
// decoder refuses when either is 0 without saying so in words.
func pngSize(b []byte) (w, h uint32, ok bool) {
	const sig = "\x89PNG\r\n\x1a\n"
	if len(b) < 24 || string(b[:8]) != sig || string(b[12:16]) != "IHDR" {
		return 0, 0, false
	}
	return binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24]), true
}

// ImageBytes writes img as channels × height × width bytes, channel first,
// into dst (length channels·height·width): grey is the BT.601 luma, colour
// from grey replicates it, and each axis is resized on its own (area
// averaging when shrinking, bilinear interpolation when enlarging; an image
// already of that size is taken as it is). channels must be 1 or 3. Rows are resized as they are read,
// so a large image costs no more memory than its decoded pixels.
func ImageBytes(img image.Image, channels, height, width int, dst []uint8) {
	if channels != 1 && channels != 3 || height < 1 || width < 1 || len(dst) != channels*height*width {
		panic(fmt.Sprintf("data.ImageBytes: %d channels of %d×%d into %d bytes", channels, height, width, len(dst)))
	}
	r := img.Bounds()
	ws, hs := resampleWeights(r.Dx(), width), resampleWeights(r.Dy(), height)
	row := make([][]float64, channels) // one source row per channel
	tmp := make([][]float64, channels) // [Dy][width] per channel: the rows resized
	for c := range channels {
		row[c], tmp[c] = make([]float64, r.Dx()), make([]float64, r.Dy()*width)
	}
	for y := range r.Dy() {
		imageRow(img, y, row)
		for c := range channels {
			for x, taps := range ws {
				var v float64
				for _, t := range taps {
					v += float64(t.w * row[c][t.i])
				}
				tmp[c][y*width+x] = v
			}
		}
	}
	for c := range channels {
		out := dst[c*height*width : (c+1)*height*width]
		for y, taps := range hs {
			for x := range width {
				var v float64
				for _, t := range taps {
					v += float64(t.w * tmp[c][t.i*width+x])
				}
				out[y*width+x] = toByte(v)
			}
		}
	}
}

// toByte rounds a value on the 0..255 scale to the nearest byte.
func toByte(v float64) uint8 {
	return uint8(math.Round(min(max(v, 0), 255)))
}

// imageRow writes row y (counted from the top of img's bounds) of img into
// row, one slice of Dx values on the 0..255 scale per channel: the BT.601
// luma for one channel, red, green and blue for three.
func imageRow(img image.Image, y int, row [][]float64) {
	r := img.Bounds()
	if g, ok := img.(*image.Gray); ok {
		for x, v := range g.Pix[y*g.Stride : y*g.Stride+r.Dx()] {
			for _, p := range row {
				p[x] = float64(v)
			}
		}
		return
	}
	const scale = 1.0 / 257 // 16-bit to 8-bit
	for x := range r.Dx() {
		// Alpha-premultiplied: transparency is composed over black.
		cr, cg, cb, _ := img.At(r.Min.X+x, r.Min.Y+y).RGBA()
		if len(row) == 1 {
			row[0][x] = (float64(0.299*float64(cr)) + float64(0.587*float64(cg)) + float64(0.114*float64(cb))) * scale
		} else {
			row[0][x], row[1][x], row[2][x] = float64(cr)*scale, float64(cg)*scale, float64(cb)*scale
		}
	}
}

// tap is one source pixel's weight in an output pixel.
type tap struct {
	i int
	w float64
}

// resampleWeights returns, for each of m output pixels along an axis of n
// source pixels, the source pixels it is made of: the identity when m == n,
// the average of the source area it covers when shrinking, and bilinear
// interpolation between pixel centres (the edges held) when enlarging.
func resampleWeights(n, m int) [][]tap {
	out := make([][]tap, m)
	switch {
	case n == m:
		for o := range out {
			out[o] = []tap{{o, 1}}
		}
	case n > m:
		s := float64(n) / float64(m)
		for o := range out {
			lo, hi := float64(o)*s, float64(o+1)*s
			for i := int(math.Floor(lo)); i < n && float64(i) < hi; i++ {
				w := min(hi, float64(i+1)) - max(lo, float64(i))
				if w > 1e-12 {
					out[o] = append(out[o], tap{i, w / s})
				}
			}
		}
	default:
		s := float64(n) / float64(m)
		for o := range out {
			c := min(max(float64((float64(o)+0.5)*s)-0.5, 0), float64(n-1))
			i := int(math.Floor(c))
			f := c - float64(i)
			if f == 0 || i+1 >= n {
				out[o] = []tap{{i, 1}}
			} else {
				out[o] = []tap{{i, 1 - f}, {i + 1, f}}
			}
		}
	}
	return out
}
