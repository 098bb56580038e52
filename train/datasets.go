package train

import (
	"strconv"

	"github.com/gtstorm/gtstorm/data"
)

// datasetKind is what a run needs to know of its dataset before loading
// it: its name (data.Registry's), the shape of its samples and its paper
// model.
type datasetKind struct {
	name string
	// logReg marks the LibSVM datasets: the non-convex logistic regression,
	// whose headline is the stationarity S(x) rather than test accuracy.
	logReg bool
	// shape and classes describe an image dataset's samples ([C,H,W]); nil
	// and 0 for LibSVM data, whose feature count comes from the files.
	shape   []int
	classes int
	// paper names the model the paper trains on the dataset, the default
	// of --model.
	paper string
}

// WithDatasets returns c looking its dataset up in r instead of
// data.Builtin: a dataset registered outside the built-ins (a test's, say)
// trains, loads, validates and is fingerprinted like a built-in one. The
// registry is not part of config.json: a run resumed from its folder looks
// its dataset up in data.Builtin again.
func (c Config) WithDatasets(r *data.Registry) Config {
	c.datasets = r
	return c
}

// registry returns the registry c's dataset is looked up in.
func (c Config) registry() *data.Registry {
	if c.datasets != nil {
		return c.datasets
	}
	return data.Builtin()
}

// imageDatasets returns the names of the registry's image datasets, those
// the networks train on.
func (c Config) imageDatasets() []string {
	var names []string
	for _, name := range c.registry().Names() {
		if s, _ := c.registry().Spec(name); !s.LogReg {
			names = append(names, name)
		}
	}
	return names
}

// dataset returns the registry entry of c's dataset.
func (c Config) dataset() (data.Spec, bool) { return c.registry().Spec(c.Dataset) }

// datasetKind returns what c's dataset is; false for an unknown name.
func (c Config) datasetKind() (datasetKind, bool) {
	s, ok := c.dataset()
	if !ok {
		return datasetKind{}, false
	}
	k := datasetKind{name: s.Name, logReg: s.LogReg, paper: s.Model}
	if !s.LogReg {
		sz := s.Sizes(c.DataDir, c.loadOptions())
		k.shape, k.classes = sz.Shape, sz.Classes
	}
	return k, true
}

// loadOptions returns the load options of c's data.
func (c Config) loadOptions() data.LoadOptions {
	return data.LoadOptions{Features: c.Features, Normalize: c.Normalize, CoarseLabels: c.CoarseLabels,
		ImageSize: c.ImageSize, Channels: c.Channels, TestSplit: c.TestSplit, SkipBad: c.SkipBad}
}

// Datasets returns the dataset names a Config accepts (data.Builtin's).
func Datasets() []string { return data.Builtin().Names() }

// classNames returns the class names of c's labels: the dataset's (see
// data.Spec.ClassNames) when it has one a label, else their numbers.
func (c Config) classNames(classes int) []string {
	if s, ok := c.dataset(); ok && s.ClassNames != nil {
		if names := s.ClassNames(c.DataDir, c.loadOptions()); len(names) == classes {
			return names
		}
	}
	names := make([]string, classes)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	return names
}
