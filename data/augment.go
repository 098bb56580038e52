package data

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gtstorm/gtstorm/internal/splitmix"
)

// AugmentKinds describes the values ParseAugment accepts, for messages.
const AugmentKinds = "none, or crop:P (P from 1 to 255 pixels), flip, or both, crop:P,flip (crop:P+flip where a comma separates values, as in --vary)"

// maxCropPad is the largest padding ParseAugment accepts; Check refuses
// paddings as large as the image's side.
const maxCropPad = 255

// Augment is a training minibatch's data augmentation, torchvision's CIFAR
// recipe: RandomCrop(H×W, padding=P) followed by RandomHorizontalFlip().
//
// The crop pads the image with P pixels on each side and cuts an H×W window
// at offset (dy, dx), each uniform in [0, 2P]: the image shifted by
// (dy−P, dx−P) pixels. The padding is black, as torchvision pads the raw
// image before ToTensor and Normalize: a padded pixel has the value a byte
// of 0 takes after the dataset's scaling and normalisation (see
// Dataset.Dense), (0 − Mean[c])/Std[c] on a normalised channel and 0
// otherwise. The flip then mirrors the image left to right with
// probability ½.
//
// Every choice derives from the batch's draw key and the sample's position
// in the batch (see Batch.Dense), never from shared state, so every
// gradient evaluated on one minibatch sees the same pixels whatever the
// goroutines or processes. A nil *Augment augments nothing.
type Augment struct {
	Pad  int  // crop padding P; 0 for no crop
	Flip bool // horizontal flip with probability ½
}

// ParseAugment parses an --augment value: "" or "none" for none (a nil
// *Augment), else parts separated by "," or "+": "crop:P" with P a whole
// number of pixels from 1 to 255, and "flip", each at most once.
func ParseAugment(s string) (*Augment, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	var a Augment
	crop := false
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '+' }) {
		name, arg, hasArg := strings.Cut(part, ":")
		switch {
		case name == "crop" && !crop:
			p, err := strconv.Atoi(arg)
			if !hasArg || err != nil || p < 1 || p > maxCropPad {
				return nil, fmt.Errorf("augment %q: %q: want crop:P with P a whole number of pixels from 1 to %d", s, part, maxCropPad)
			}
			a.Pad, crop = p, true
		case part == "flip" && !a.Flip:
			a.Flip = true
		case name == "crop" || part == "flip":
			return nil, fmt.Errorf("augment %q: %s given twice", s, name)
		default:
			return nil, fmt.Errorf("augment %q: unknown part %q, want crop:P or flip", s, part)
		}
	}
	if !crop && !a.Flip {
		return nil, fmt.Errorf("augment %q: no part, want %s", s, AugmentKinds)
	}
	return &a, nil
}

// String returns a in ParseAugment's form: "none", "crop:P", "flip" or
// "crop:P,flip".
func (a *Augment) String() string {
	switch {
	case a == nil:
		return "none"
	case a.Pad > 0 && a.Flip:
		return fmt.Sprintf("crop:%d,flip", a.Pad)
	case a.Pad > 0:
		return fmt.Sprintf("crop:%d", a.Pad)
	default:
		return "flip"
	}
}

// Check reports whether a applies to samples of the given shape: images
// [C H W] whose sides exceed the crop padding.
func (a *Augment) Check(shape []int) error {
	if a == nil {
		return nil
	}
	if len(shape) != 3 {
		return fmt.Errorf("augment %v: samples of shape %v are not images [C H W]", a, shape)
	}
	if h, w := shape[1], shape[2]; a.Pad >= min(h, w) {
		return fmt.Errorf("augment %v: padding %d not smaller than the %d×%d images", a, a.Pad, h, w)
	}
	return nil
}

// Apply augments img, one sample of d (shape [C H W], as Dense writes it),
// in place, with the crop offsets and flip that key selects. It allocates
// nothing.
func (a *Augment) Apply(d *Dataset, img []float32, key uint64) {
	if a == nil {
		return
	}
	sy, sx, flip := a.choose(key)
	transform(d, img, sy, sx, flip)
}

// choose returns the shift (sy, sx) = (dy−P, dx−P), each uniform in
// [−P, P], and the flip that key selects.
func (a *Augment) choose(key uint64) (sy, sx int, flip bool) {
	r := splitmix.Hash(key)
	if a.Pad > 0 {
		n := uint64(2*a.Pad + 1)
		sy = int(((r>>32)*n)>>32) - a.Pad
		sx = int(((r&0xffffffff)*n)>>32) - a.Pad
	}
	return sy, sx, a.Flip && splitmix.Hash(r)>>63 == 1
}

// transform shifts img, a sample of d, by (sy, sx) with black fill, then
// mirrors it left to right if flip.
func transform(d *Dataset, img []float32, sy, sx int, flip bool) {
	c, h, w := d.Shape[0], d.Shape[1], d.Shape[2]
	for ch := range c {
		plane := img[ch*h*w : (ch+1)*h*w]
		if sy != 0 || sx != 0 {
			shift(plane, h, w, sy, sx, d.black(ch))
		}
		if flip {
			for y := range h {
				row := plane[y*w : (y+1)*w]
				for i, j := 0, w-1; i < j; i, j = i+1, j-1 {
					row[i], row[j] = row[j], row[i]
				}
			}
		}
	}
}

// shift moves the h×w plane in place so that pixel (y, x) takes the value
// of (y+sy, x+sx), fill where that lies outside the plane. Rows are
// written in the order that reads each source row before it is
// overwritten.
func shift(plane []float32, h, w, sy, sx int, fill float32) {
	for k := range h {
		y := k
		if sy < 0 {
			y = h - 1 - k
		}
		dst := plane[y*w : (y+1)*w]
		src := y + sy
		if src < 0 || src >= h || sx >= w || -sx >= w {
			fillRow(dst, fill)
			continue
		}
		from := plane[src*w : (src+1)*w]
		if sx >= 0 {
			copy(dst[:w-sx], from[sx:])
			fillRow(dst[w-sx:], fill)
		} else {
			copy(dst[-sx:], from[:w+sx])
			fillRow(dst[:-sx], fill)
		}
	}
}

func fillRow(row []float32, v float32) {
	for i := range row {
		row[i] = v
	}
}

// black returns the value Dense gives a pixel of raw value 0 in channel c:
// the augmentation's padding.
func (d *Dataset) black(c int) float32 {
	if d.Bytes != nil && d.Mean != nil {
		return standardise(0, d.Mean[c], d.Std[c])
	}
	return 0
}

// sampleKey is the key of the sample at position k of a batch drawn with
// key draw: the k+1-th output of a SplitMix64 stream seeded by draw.
func sampleKey(draw uint64, k int) uint64 {
	return draw + uint64(k)*splitmix.Gamma
}

// Dense writes the features of the batch's k-th sample into dst (length
// Data.Dim()): Data.Dense, then the batch's augmentation, if any, keyed by
// (Draw, k). Every load of one batch gives the same values.
func (b Batch) Dense(k int, dst []float32) {
	b.Data.Dense(b.Index[k], dst)
	b.Augment.Apply(b.Data, dst, sampleKey(b.Draw, k))
}
