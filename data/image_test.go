package data

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePNG encodes img as a PNG file in dir and returns its path.
func writePNG(t *testing.T, dir, name string, img image.Image) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// pngWithHeader returns a PNG that holds only an IHDR chunk of the given
// size (8-bit grey) and IEND, which no encoder writes for a 0×0 image.
func pngWithHeader(w, h uint32) []byte {
	chunk := func(typ string, body []byte) []byte {
		var b bytes.Buffer
		binary.Write(&b, binary.BigEndian, uint32(len(body)))
		b.WriteString(typ)
		b.Write(body)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), body...)))
		return b.Bytes()
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = 8 // bit depth; colour type 0 (grey)
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr)...)
	return append(out, chunk("IEND", nil)...)
}

// testGray returns a w×h grey image with a fixed pattern of all byte values.
func testGray(w, h int) *image.Gray {
	g := image.NewGray(image.Rect(0, 0, w, h))
	for i := range g.Pix {
		g.Pix[i] = uint8((i*37 + i/w*11) % 256)
	}
	return g
}

// corrupt returns a copy of a PNG whose chunks after the header are
// overwritten, its IEND chunk kept.
func corrupt(b []byte) []byte {
	c := bytes.Clone(b)
	for i := 40; i < len(c)-12; i++ {
		c[i] = 0xAA
	}
	return c
}

func TestResampleWeights(t *testing.T) {
	for _, c := range [][2]int{{28, 28}, {56, 28}, {100, 28}, {29, 28}, {3, 2}, {7, 32}, {1, 5}, {28, 1}, {1000, 32}} {
		ws := resampleWeights(c[0], c[1])
		if len(ws) != c[1] {
			t.Fatalf("%d→%d: %d outputs", c[0], c[1], len(ws))
		}
		for o, taps := range ws {
			sum := 0.0
			for _, tp := range taps {
				if tp.i < 0 || tp.i >= c[0] || tp.w <= 0 {
					t.Fatalf("%d→%d: output %d has tap %+v", c[0], c[1], o, tp)
				}
				sum += tp.w
			}
			if math.Abs(sum-1) > 1e-12 {
				t.Errorf("%d→%d: output %d weights sum to %v", c[0], c[1], o, sum)
			}
		}
	}
	// 3→2 by area: output 0 is (p0 + p1/2)/1.5, output 1 is (p1/2 + p2)/1.5.
	ws := resampleWeights(3, 2)
	want := [][]tap{{{0, 2.0 / 3}, {1, 1.0 / 3}}, {{1, 1.0 / 3}, {2, 2.0 / 3}}}
	for o := range want {
		for k := range want[o] {
			if len(ws[o]) != len(want[o]) || ws[o][k].i != want[o][k].i || math.Abs(ws[o][k].w-want[o][k].w) > 1e-12 {
				t.Fatalf("3→2: %v, want %v", ws, want)
			}
		}
	}
}

// TestImageBytesExact: an image of the target size in grey comes out as
// its own bytes; one enlarged by pixel replication to twice the size, in
// grey RGB, comes back exactly by area averaging.
func TestImageBytesExact(t *testing.T) {
	g := testGray(28, 28)
	dst := make([]uint8, 28*28)
	ImageBytes(g, 1, 28, 28, dst)
	if !bytes.Equal(dst, g.Pix) {
		t.Fatal("a 28×28 grey image does not come out as its bytes")
	}
	big := image.NewRGBA(image.Rect(0, 0, 56, 56))
	for y := range 56 {
		for x := range 56 {
			v := g.GrayAt(x/2, y/2).Y
			big.SetRGBA(x, y, color.RGBA{v, v, v, 255})
		}
	}
	clear(dst)
	ImageBytes(big, 1, 28, 28, dst)
	if !bytes.Equal(dst, g.Pix) {
		t.Fatal("a 56×56 RGB copy by replication does not shrink back to the 28×28 bytes")
	}
	// A sub-image with a non-zero origin reads its own pixels.
	sub2 := image.NewRGBA(image.Rect(10, 20, 66, 76))
	for y := range 56 {
		for x := range 56 {
			sub2.Set(10+x, 20+y, big.At(x, y))
		}
	}
	clear(dst)
	ImageBytes(sub2, 1, 28, 28, dst)
	if !bytes.Equal(dst, g.Pix) {
		t.Fatal("an image whose bounds start at (10,20) is read wrongly")
	}
}

func TestImageBytesColour(t *testing.T) {
	red := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	for i := 0; i < len(red.Pix); i += 4 {
		red.Pix[i], red.Pix[i+3] = 255, 255
	}
	// BT.601 luma of pure red: 0.299·255 = 76.245.
	grey := make([]uint8, 2*2)
	ImageBytes(red, 1, 2, 2, grey)
	for _, v := range grey {
		if v != 76 {
			t.Fatalf("luma of red: %v, want 76", grey)
		}
	}
	rgb := make([]uint8, 3*2*2)
	ImageBytes(red, 3, 2, 2, rgb)
	if !bytes.Equal(rgb, []uint8{255, 255, 255, 255, 0, 0, 0, 0, 0, 0, 0, 0}) {
		t.Fatalf("red as RGB planes: %v", rgb)
	}
	// Grey to colour replicates.
	g := testGray(5, 3)
	rgb = make([]uint8, 3*5*3)
	ImageBytes(g, 3, 3, 5, rgb)
	for c := range 3 {
		if !bytes.Equal(rgb[c*15:(c+1)*15], g.Pix) {
			t.Fatalf("channel %d of a grey image is not the grey values", c)
		}
	}
	// Transparent pixels are composed over black; half-transparent white is 128.
	tr := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	tr.SetNRGBA(0, 0, color.NRGBA{255, 255, 255, 0})
	tr.SetNRGBA(1, 0, color.NRGBA{255, 255, 255, 128})
	out := make([]uint8, 2)
	ImageBytes(tr, 1, 1, 2, out)
	if out[0] != 0 || out[1] != 128 {
		t.Fatalf("transparent white, half-transparent white: %v, want [0 128]", out)
	}
}

// TestImageBytesEnlarge: a 2-pixel ramp enlarged to 4 interpolates between
// the pixel centres and holds the edges.
func TestImageBytesEnlarge(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 2, 1))
	g.Pix[0], g.Pix[1] = 0, 255
	out := make([]uint8, 4)
	ImageBytes(g, 1, 1, 4, out)
	if !bytes.Equal(out, []uint8{0, 64, 191, 255}) {
		t.Fatalf("0,255 enlarged to 4: %v, want [0 64 191 255]", out)
	}
}

func TestLoadImages(t *testing.T) {
	dir := t.TempDir()
	g := testGray(28, 28)
	p1 := writePNG(t, dir, "a.png", g)
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, g, &jpeg.Options{Quality: 100}); err != nil {
		t.Fatal(err)
	}
	p2 := filepath.Join(dir, "b.jpg")
	os.WriteFile(p2, jb.Bytes(), 0o644)

	d, err := loadImages([]string{p1, p2}, ImageInput{Shape: []int{1, 28, 28}, Classes: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d.Len() != 2 || d.Dim() != 784 || d.Classes != 10 || d.Mean != nil {
		t.Fatalf("dataset %+v", d)
	}
	if !bytes.Equal(d.Bytes[:784], g.Pix) {
		t.Fatal("the PNG's bytes differ from the image's")
	}
	diff := 0
	for i, v := range d.Bytes[784:] {
		diff = max(diff, int(v)-int(g.Pix[i]), int(g.Pix[i])-int(v))
	}
	if diff > 8 {
		t.Errorf("the quality-100 JPEG differs from the image by up to %d", diff)
	}

	// Normalised colour input: Dense standardises with the given statistics.
	in := ImageInput{Shape: []int{3, 8, 8}, Classes: 10, Mean: []float32{0.4, 0.5, 0.6}, Std: []float32{0.2, 0.25, 0.3}}
	d, err = loadImages([]string{p1}, in)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, d.Dim())
	d.Dense(0, x)
	for k, b := range d.Bytes {
		c := k / 64
		if want := (float32(b)*(1.0/255) - in.Mean[c]) / in.Std[c]; x[k] != want {
			t.Fatalf("feature %d: %v, want %v", k, x[k], want)
		}
	}
	in.Mean[0] = 99 // the dataset holds its own copy
	if d.Mean[0] != 0.4 {
		t.Error("LoadImages shares the caller's Mean")
	}

	for _, bad := range []ImageInput{
		{Shape: []int{2, 28, 28}, Classes: 10},
		{Shape: []int{1, 28}, Classes: 10},
		{Shape: []int{1, 28, 28}, Classes: 0},
		{Shape: []int{3, 8, 8}, Classes: 10, Mean: []float32{0, 0, 0}, Std: []float32{1, 0, 1}},
		{Shape: []int{3, 8, 8}, Classes: 10, Mean: []float32{0}, Std: []float32{1}},
	} {
		if _, err := loadImages([]string{p1}, bad); err == nil {
			t.Errorf("LoadImages accepts %+v", bad)
		}
	}
}

// TestLoadImagesErrors: every kind of bad file is refused with a one-line
// error naming the file and what is wrong.
func TestLoadImagesErrors(t *testing.T) {
	dir := t.TempDir()
	var full bytes.Buffer
	png.Encode(&full, testGray(28, 28))
	var jb bytes.Buffer
	jpeg.Encode(&jb, testGray(64, 64), &jpeg.Options{Quality: 90})
	files := map[string][]byte{
		"text.png":      []byte("this is not an image\n"),
		"zero.png":      pngWithHeader(0, 0),
		"zerow.png":     pngWithHeader(0, 5),
		"trunc.png":     full.Bytes()[:full.Len()/2],
		"trunc2.png":    full.Bytes()[:30],
		"trunc.jpg":     jb.Bytes()[:jb.Len()/2],
		"empty.png":     nil,
		"huge.png":      pngWithHeader(100000, 100000),
		"garbage.bin":   {0x00, 0x01, 0x02, 0xff, 0xfe, 0x10},
		"corrupt.png":   corrupt(full.Bytes()),
		"directory.png": nil, // made a folder below
		"anim.gif":      []byte("GIF89a\x01\x00\x01\x00"),
	}
	want := map[string]string{
		"text.png":      "not a PNG or JPEG image (the file holds text)",
		"zero.png":      "PNG of 0×0 pixels",
		"zerow.png":     "PNG of 0×5 pixels",
		"trunc.png":     "truncated PNG",
		"trunc2.png":    "truncated PNG",
		"trunc.jpg":     "truncated JPEG",
		"empty.png":     "empty file",
		"huge.png":      "100000×100000 pixels, more than",
		"garbage.bin":   "not a PNG or JPEG image (the file starts with bytes 00 01 02 ff fe 10)",
		"corrupt.png":   "corrupt PNG",
		"directory.png": "directory",
		"anim.gif":      "not a PNG or JPEG image (it looks like a GIF image; convert it to PNG)",
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if name == "directory.png" {
			os.Mkdir(p, 0o755)
		} else {
			os.WriteFile(p, b, 0o644)
		}
		_, err := loadImages([]string{writePNG(t, dir, "good.png", testGray(3, 3)), p}, ImageInput{Shape: []int{1, 28, 28}, Classes: 10})
		if err == nil {
			t.Errorf("%s: loaded", name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, p) || !strings.Contains(msg, want[name]) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q, want one line naming %s and saying %q", name, msg, p, want[name])
		}
	}
	if _, err := loadImages(nil, ImageInput{Shape: []int{1, 28, 28}, Classes: 10}); err == nil {
		t.Error("LoadImages of no files succeeds")
	}
}
