package data

import (
	"errors"
	"slices"
)

// loadImages decodes PNG and JPEG files into a byte Dataset of in.Shape
// with in's Mean and Std, so that Dense gives what a model trained on such
// data saw: each image is converted to the channel count (colour to grey by
// the ITU-R BT.601 luma, grey to colour by replicating it; transparency is
// composed over black), resized to height × width (area averaging when
// shrinking, bilinear interpolation when enlarging, each axis on its own;
// an image already of that size is taken as it is) and rounded to bytes.
// Sample i is paths[i]; labels are all 0. Errors name the file and the
// fault: not a PNG or JPEG image, no pixels, truncated, too large. It is
// what predict does to its files (ReadImage, then ImageBytes), as one
// Dataset, for the tests of that conversion.
func loadImages(paths []string, in ImageInput) (*Dataset, error) {
	if err := in.Check(); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, errors.New("no image files given")
	}
	d := &Dataset{
		Name:    "images",
		Shape:   slices.Clone(in.Shape),
		Classes: in.Classes,
		Labels:  make([]uint8, len(paths)),
		Mean:    slices.Clone(in.Mean),
		Std:     slices.Clone(in.Std),
	}
	dim := d.Dim()
	d.Bytes = make([]uint8, len(paths)*dim)
	for i, p := range paths {
		img, err := ReadImage(p)
		if err != nil {
			return nil, err
		}
		ImageBytes(img, in.Shape[0], in.Shape[1], in.Shape[2], d.Bytes[i*dim:(i+1)*dim])
	}
	return d, nil
}
