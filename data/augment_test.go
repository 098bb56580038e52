package data

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseAugment(t *testing.T) {
	for _, c := range []struct {
		in   string
		want *Augment // nil with bad "" for none
		bad  string   // part of the error, "" for none
	}{
		{in: "", want: nil},
		{in: "none", want: nil},
		{in: "crop:4", want: &Augment{Pad: 4}},
		{in: "flip", want: &Augment{Flip: true}},
		{in: "crop:4,flip", want: &Augment{Pad: 4, Flip: true}},
		{in: "flip,crop:2", want: &Augment{Pad: 2, Flip: true}},
		{in: "crop:4+flip", want: &Augment{Pad: 4, Flip: true}},
		{in: "crop:255", want: &Augment{Pad: 255}},
		{in: "crop:-1", bad: `"crop:-1": want crop:P`},
		{in: "crop:0", bad: "from 1 to 255"},
		{in: "crop:256", bad: "from 1 to 255"},
		{in: "crop:1.5", bad: `"crop:1.5"`},
		{in: "crop:x", bad: `"crop:x"`},
		{in: "crop", bad: `"crop": want crop:P`},
		{in: "crop:", bad: `"crop:"`},
		{in: "flip:0.5", bad: `unknown part "flip:0.5"`},
		{in: "rotate:10", bad: `unknown part "rotate:10"`},
		{in: "crop:4,crop:2", bad: "crop given twice"},
		{in: "flip,flip", bad: "flip given twice"},
		{in: ",", bad: "no part"},
		{in: "None", bad: `unknown part "None"`},
	} {
		a, err := ParseAugment(c.in)
		if c.bad != "" {
			if err == nil || !strings.Contains(err.Error(), c.bad) || strings.Contains(err.Error(), "\n") {
				t.Errorf("ParseAugment(%q) = %v, %v; want one line naming %q", c.in, a, err, c.bad)
			}
			continue
		}
		if err != nil || (a == nil) != (c.want == nil) || a != nil && *a != *c.want {
			t.Errorf("ParseAugment(%q) = %v, %v; want %v", c.in, a, err, c.want)
			continue
		}
		if back, err := ParseAugment(a.String()); err != nil || (back == nil) != (a == nil) || a != nil && *back != *a {
			t.Errorf("ParseAugment(%q).String() = %q does not parse back: %v, %v", c.in, a.String(), back, err)
		}
	}
}

func TestAugmentCheck(t *testing.T) {
	for _, c := range []struct {
		a     *Augment
		shape []int
		bad   string
	}{
		{nil, []int{123}, ""},
		{&Augment{Pad: 4, Flip: true}, []int{3, 32, 32}, ""},
		{&Augment{Pad: 27}, []int{1, 28, 28}, ""},
		{&Augment{Pad: 28}, []int{1, 28, 28}, "padding 28 not smaller than the 28×28 images"},
		{&Augment{Pad: 5}, []int{1, 5, 9}, "padding 5 not smaller than the 5×9 images"},
		{&Augment{Flip: true}, []int{123}, "samples of shape [123] are not images"},
		{&Augment{Pad: 1}, []int{28, 28}, "not images [C H W]"},
	} {
		err := c.a.Check(c.shape)
		if c.bad == "" && err != nil || c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)) {
			t.Errorf("%v.Check(%v) = %v, want error containing %q", c.a, c.shape, err, c.bad)
		}
	}
}

// TestAugmentTransform checks crops and flips of a 1×3×4 float image, and
// of a 2-channel one, against arrays written out by hand.
func TestAugmentTransform(t *testing.T) {
	img := []float32{
		1, 2, 3, 4,
		5, 6, 7, 8,
		9, 10, 11, 12,
	}
	for _, c := range []struct {
		sy, sx int
		flip   bool
		want   []float32
	}{
		{0, 0, false, img},
		{0, 0, true, []float32{4, 3, 2, 1, 8, 7, 6, 5, 12, 11, 10, 9}},
		// pixel (y, x) takes (y+sy, x+sx): the window moved down and right.
		{1, 0, false, []float32{5, 6, 7, 8, 9, 10, 11, 12, 0, 0, 0, 0}},
		{-1, 0, false, []float32{0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}},
		{0, 2, false, []float32{3, 4, 0, 0, 7, 8, 0, 0, 11, 12, 0, 0}},
		{0, -1, false, []float32{0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11}},
		{1, -2, false, []float32{0, 0, 5, 6, 0, 0, 9, 10, 0, 0, 0, 0}},
		{-2, 1, false, []float32{0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 4, 0}},
		{-1, 1, true, []float32{0, 0, 0, 0, 0, 4, 3, 2, 0, 8, 7, 6}},
		{2, 3, true, []float32{0, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0}},
	} {
		d := &Dataset{Shape: []int{1, 3, 4}, Floats: slices.Clone(img), Labels: []uint8{0}}
		got := slices.Clone(img)
		transform(d, got, c.sy, c.sx, c.flip)
		if !slices.Equal(got, c.want) {
			t.Errorf("shift (%d, %d) flip %v: got %v, want %v", c.sy, c.sx, c.flip, got, c.want)
		}
		// Two channels: each moves alike, the second holding img+100.
		two := slices.Concat(img, plus(img, 100))
		d2 := &Dataset{Shape: []int{2, 3, 4}, Floats: two, Labels: []uint8{0}}
		got2 := slices.Clone(two)
		transform(d2, got2, c.sy, c.sx, c.flip)
		want2 := slices.Concat(c.want, plus(c.want, 100))
		for k := range want2[12:] {
			if c.want[k] == 0 {
				want2[12+k] = 0 // the fill is 0 on every channel of float data
			}
		}
		if !slices.Equal(got2, want2) {
			t.Errorf("2 channels, shift (%d, %d) flip %v: got %v, want %v", c.sy, c.sx, c.flip, got2, want2)
		}
	}
}

func plus(v []float32, c float32) []float32 {
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = x + c
	}
	return out
}

// TestAugmentPadsBlack checks that on normalised byte images the padding
// is black, as torchvision pads before Normalize: an augmented sample
// equals, bit for bit, Dense of the image shifted by hand over zero bytes.
func TestAugmentPadsBlack(t *testing.T) {
	const c, h, w = 3, 5, 6
	raw := make([]uint8, c*h*w)
	for i := range raw {
		raw[i] = uint8(37*i + 11)
	}
	d := &Dataset{Name: "rgb", Shape: []int{c, h, w}, Labels: []uint8{0}, Bytes: raw,
		Mean: []float32{0.49, 0.48, 0.45}, Std: []float32{0.25, 0.24, 0.26}}
	a := &Augment{Pad: 2, Flip: true}
	seen := map[[3]int]bool{}
	for key := uint64(1); len(seen) < 5*5*2 && key < 10000; key++ {
		sy, sx, flip := a.choose(key)
		seen[[3]int{sy, sx, b2i(flip)}] = true
		moved := make([]uint8, len(raw)) // zero bytes: black
		for ch := range c {
			for y := range h {
				for x := range w {
					sy2, sx2 := y+sy, x+sx
					if flip {
						sx2 = w - 1 - x + sx
					}
					if sy2 >= 0 && sy2 < h && sx2 >= 0 && sx2 < w {
						moved[(ch*h+y)*w+x] = raw[(ch*h+sy2)*w+sx2]
					}
				}
			}
		}
		want := make([]float32, c*h*w)
		(&Dataset{Shape: d.Shape, Labels: d.Labels, Bytes: moved, Mean: d.Mean, Std: d.Std}).Dense(0, want)
		got := make([]float32, c*h*w)
		d.Dense(0, got)
		a.Apply(d, got, key)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("key %d (shift %d, %d, flip %v): value %d is %v, want %v", key, sy, sx, flip, i, got[i], want[i])
			}
		}
	}
	if len(seen) != 5*5*2 {
		t.Errorf("%d of the 50 (shift, flip) choices seen", len(seen))
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAugmentChoices checks that keys cover every crop offset and both
// flips about equally often, and that one key always chooses alike.
func TestAugmentChoices(t *testing.T) {
	a := &Augment{Pad: 4, Flip: true}
	const n = 81 * 2 * 200
	count := map[[3]int]int{}
	for k := range n {
		key := sampleKey(0x1234567, k)
		sy, sx, flip := a.choose(key)
		if sy < -4 || sy > 4 || sx < -4 || sx > 4 {
			t.Fatalf("key %d: shift (%d, %d) outside [−4, 4]", key, sy, sx)
		}
		if sy2, sx2, flip2 := a.choose(key); sy2 != sy || sx2 != sx || flip2 != flip {
			t.Fatalf("key %d chooses (%d, %d, %v), then (%d, %d, %v)", key, sy, sx, flip, sy2, sx2, flip2)
		}
		count[[3]int{sy, sx, b2i(flip)}]++
	}
	if len(count) != 162 {
		t.Fatalf("%d of the 162 choices seen", len(count))
	}
	for ch, c := range count {
		if c < 120 || c > 280 { // mean 200, sd about 14
			t.Errorf("choice %v drawn %d times in %d, want about 200", ch, c, n)
		}
	}
	if sy, sx, _ := (&Augment{Flip: true}).choose(99); sy != 0 || sx != 0 {
		t.Errorf("flip alone shifts by (%d, %d)", sy, sx)
	}
	for k := range 100 {
		if _, _, flip := (&Augment{Pad: 3}).choose(uint64(k)); flip {
			t.Fatal("crop alone flips")
		}
	}
}

// TestBatchDense checks that a batch's samples are augmented by its key and
// their position: the same batch loads the same pixels, another key or
// position others, a batch without augmentation the dataset's.
func TestBatchDense(t *testing.T) {
	const side = 8
	raw := make([]uint8, 2*side*side)
	for i := range raw {
		raw[i] = uint8(i*7 + 1)
	}
	d := &Dataset{Name: "grey", Shape: []int{1, side, side}, Labels: []uint8{0, 1}, Bytes: raw}
	a := &Augment{Pad: 2, Flip: true}
	load := func(b Batch, k int) []float32 {
		v := make([]float32, side*side)
		b.Dense(k, v)
		return v
	}
	b := Batch{Data: d, Index: []int{1, 0, 1}, Draw: 0xabcdef, Augment: a}
	for k, i := range b.Index {
		want := make([]float32, side*side)
		d.Dense(i, want)
		a.Apply(d, want, sampleKey(b.Draw, k))
		if got := load(b, k); !slices.Equal(got, want) || !slices.Equal(load(b, k), got) {
			t.Errorf("sample %d: loads differ from Dense then Apply", k)
		}
	}
	same := Batch{Data: d, Index: []int{1, 1, 1, 1, 1, 1}, Draw: b.Draw, Augment: a}
	distinct := map[[3]int]bool{}
	for k := range same.Index {
		sy, sx, flip := a.choose(sampleKey(same.Draw, k))
		distinct[[3]int{sy, sx, b2i(flip)}] = true
	}
	if len(distinct) < 2 {
		t.Error("one sample at 6 positions of a batch: one crop, want one per position")
	}
	other := b
	other.Draw++
	differ := 0
	for k := range b.Index {
		if !slices.Equal(load(b, k), load(other, k)) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("another draw key gives the same pixels")
	}
	plain := make([]float32, side*side)
	d.Dense(1, plain)
	if got := load(Batch{Data: d, Index: []int{1}, Draw: 5}, 0); !slices.Equal(got, plain) {
		t.Error("a batch without augmentation is not the dataset's sample")
	}
}

func TestAugmentAllocations(t *testing.T) {
	d := &Dataset{Name: "rgb", Shape: []int{3, 32, 32}, Labels: []uint8{0}, Bytes: make([]uint8, 3*32*32),
		Mean: []float32{0.5, 0.5, 0.5}, Std: []float32{0.2, 0.2, 0.2}}
	b := Batch{Data: d, Index: []int{0}, Draw: 3, Augment: &Augment{Pad: 4, Flip: true}}
	v := make([]float32, d.Dim())
	if n := testing.AllocsPerRun(100, func() { b.Draw += 2; b.Dense(0, v) }); n != 0 {
		t.Errorf("Batch.Dense with augmentation: %v allocations, want 0", n)
	}
}
