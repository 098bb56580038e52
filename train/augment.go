package train

import (
	"flag"
	"fmt"

	"github.com/gtstorm/gtstorm/data"
)

// Data augmentation (SPEC §13): --augment's setting and the augmentation
// of a run's training batches.

// augmentSettings returns the settings table's entry for --augment.
func augmentSettings() []Setting {
	return []Setting{
		{Name: "augment", Usage: "training batches' augmentation: none, crop:P (random crop of the image padded by P black pixels a side), flip (horizontal flip with probability ½) or crop:P,flip (crop:P+flip in --vary); seeded per (seed, node, draw)", Sweepable: true,
			field: func(c *Config) flag.Value { return (*stringValue)(&c.Augment) },
			want:  augmentWant},
	}
}

// augmentWant returns what --augment accepts when c's value is not
// allowed, else "": a value ParseAugment takes, on image data whose sides
// exceed the crop padding.
func augmentWant(c Config) string {
	a, err := data.ParseAugment(c.Augment)
	if err != nil {
		return data.AugmentKinds
	}
	k, ok := c.datasetKind()
	if a == nil || !ok {
		return ""
	}
	if k.logReg || len(k.shape) != 3 {
		return fmt.Sprintf("none with --dataset %s: augmentation applies to images, and %s holds feature vectors", c.Dataset, c.DataName())
	}
	if err := a.Check(k.shape); err != nil {
		return fmt.Sprintf("a crop padding smaller than %s's %d×%d images", c.DataName(), k.shape[1], k.shape[2])
	}
	return ""
}

// trainAugment returns the augmentation of cfg's training batches (nil for
// none), refusing one that does not fit the loaded training set's samples.
func trainAugment(cfg Config, train *data.Dataset) (*data.Augment, error) {
	a, err := data.ParseAugment(cfg.Augment)
	if err != nil {
		return nil, &ConfigError{"augment", cfg.Augment, data.AugmentKinds}
	}
	if a.Check(train.Shape) == nil {
		return a, nil
	}
	want := fmt.Sprintf("none on %s, whose samples of shape %v are not images [C H W]", cfg.DataName(), train.Shape)
	if sh := train.Shape; len(sh) == 3 {
		want = fmt.Sprintf("a crop padding smaller than %s's %d×%d images", cfg.DataName(), sh[1], sh[2])
	}
	return nil, &ConfigError{"augment", cfg.Augment, want}
}
