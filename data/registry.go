package data

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Spec is one dataset gtstorm can train on: everything the rest of the
// program asks of a dataset, in one entry of a Registry. Its functions take
// the --data-dir value (dir, "" for the dataset's default place) and the
// load options; none of them may keep state between calls.
type Spec struct {
	// Name is the --dataset value.
	Name string
	// LogReg marks LibSVM data: features counted from the files, and the
	// non-convex logistic regression as the model, whose headline is the
	// stationarity S(x) rather than test accuracy.
	LogReg bool
	// Model names the network trained when --model is empty (the paper's
	// model of the dataset), a models.New name.
	Model string
	// CoarseLabels says that the dataset takes --coarse-labels.
	CoarseLabels bool
	// Load reads the training and the test set (nil where there is none).
	// Data that `data fetch` would download but that is absent is a
	// *NotPresentError.
	Load func(dir string, opt LoadOptions) (train, test *Dataset, err error)
	// Files returns the files Load reads, for a run's input fingerprints;
	// the registry drops those that do not exist and makes them absolute.
	Files func(dir string, opt LoadOptions) ([]string, error)
	// Folder, for data read from a folder of many files (an image folder),
	// returns the folder as a run records it among its inputs: one entry
	// for the whole folder where Files would list thousands; nil for data
	// whose files Files lists.
	Folder func(dir string, opt LoadOptions) (*InputFolder, error)
	// Sizes describes the data without loading it: counts, sample shape,
	// classes and memory (see Sizes).
	Sizes func(dir string, opt LoadOptions) Sizes
	// Survey returns the lines of `gtstorm data info` for the data folder
	// dir (never ""); nil for none.
	Survey func(dir string) []Status
	// ClassNames returns the names of the labels (nil: their numbers), as
	// `predict` prints them; nil for none.
	ClassNames func(dir string, opt LoadOptions) []string
	// Remote is what `gtstorm data fetch NAME` downloads; nil for none.
	Remote *Remote
	// FetchNote, for a dataset without a Remote, is the one line `gtstorm
	// data fetch NAME` answers: how to get the data instead.
	FetchNote string
	// Writers marks data whose samples carry writer ids (Dataset.Writers),
	// which --partition natural keeps together.
	Writers bool
}

// Sizes is what a dataset holds, known without loading it: image sets
// know their sizes, LibSVM files are scanned.
type Sizes struct {
	Train, Test int   // samples; Test 0 when there is no test set
	Shape       []int // one sample: [C H W] for images, [features] for LibSVM
	Classes     int
	// Bytes is the memory the loaded sets hold, Load what loading holds on
	// top of it while it runs.
	Bytes, Load int64
	Detail      string // for the memory estimate, e.g. "MNIST, 70000 images"
}

// Registry is a table of datasets by name. A Registry is never modified:
// With returns a new one, so a test can add a dataset to its own copy of
// the built-ins without touching anyone else's.
type Registry struct{ specs []Spec }

// NewRegistry returns a registry of specs, refusing a spec without a name,
// loader, file list or sizes, and a name given twice.
func NewRegistry(specs ...Spec) (*Registry, error) {
	r := &Registry{}
	for _, s := range specs {
		switch {
		case s.Name == "":
			return nil, errors.New("dataset registry: a dataset without a name")
		case s.Load == nil || s.Files == nil || s.Sizes == nil:
			return nil, fmt.Errorf("dataset registry: %s: want a loader, a file list and sizes", s.Name)
		case s.Remote != nil && s.Remote.Name != s.Name:
			return nil, fmt.Errorf("dataset registry: %s: its download is called %s", s.Name, s.Remote.Name)
		}
		if _, dup := r.Spec(s.Name); dup {
			return nil, fmt.Errorf("dataset registry: %s registered twice", s.Name)
		}
		r.specs = append(r.specs, s)
	}
	return r, nil
}

// With returns a new registry holding r's datasets and then specs.
func (r *Registry) With(specs ...Spec) (*Registry, error) {
	return NewRegistry(append(slices.Clone(r.specs), specs...)...)
}

// builtin is the registry of the datasets gtstorm ships, built once.
var builtin = func() *Registry {
	r, err := NewRegistry(
		mnistSpec(), fashionSpec(DebianFashionDir), cifar10Spec(), cifar100Spec(),
		imageFolderSpec(), libsvmFileSpec(), libsvmSetSpec("a9a"), libsvmSetSpec("ijcnn1"), libsvmSetSpec("rcv1"),
		femnistSpec(),
	)
	if err != nil {
		panic(err)
	}
	return r
}()

// Builtin returns the registry of the datasets gtstorm ships.
func Builtin() *Registry { return builtin }

// Spec returns the dataset called name.
func (r *Registry) Spec(name string) (Spec, bool) {
	for _, s := range r.specs {
		if s.Name == name {
			if s.Remote != nil {
				c := s.Remote.clone()
				s.Remote = &c
			}
			return s, true
		}
	}
	return Spec{}, false
}

// Names returns the dataset names, in registry order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.specs))
	for i, s := range r.specs {
		names[i] = s.Name
	}
	return names
}

// unknown is the error for a name the registry lacks.
func (r *Registry) unknown(name string) error {
	return fmt.Errorf("unknown dataset %q (want one of %v)", name, r.Names())
}

// LoadWith loads the dataset called name; see Spec.Load.
func (r *Registry) LoadWith(name, dir string, opt LoadOptions) (train, test *Dataset, err error) {
	s, ok := r.Spec(name)
	if !ok {
		return nil, nil, r.unknown(name)
	}
	return s.Load(dir, opt)
}

// Files returns the files LoadWith(name, dir, opt) reads, as absolute
// paths, so that a caller can fingerprint a run's inputs. Files that the
// loader would look for but that do not exist are left out (the load
// reports them).
func (r *Registry) Files(name, dir string, opt LoadOptions) ([]string, error) {
	s, ok := r.Spec(name)
	if !ok {
		return nil, errors.New("unknown dataset " + name)
	}
	paths, err := s.Files(dir, opt)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		if st, err := os.Stat(p); err != nil || st.IsDir() {
			continue
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("input file %s: %w", p, err)
		}
		out = append(out, abs)
	}
	return out, nil
}

// Folder returns the input folder of dataset name read from dir with opt
// (see Spec.Folder), or nil for a dataset whose inputs are its Files.
func (r *Registry) Folder(name, dir string, opt LoadOptions) (*InputFolder, error) {
	s, ok := r.Spec(name)
	if !ok {
		return nil, errors.New("unknown dataset " + name)
	}
	if s.Folder == nil {
		return nil, nil
	}
	return s.Folder(dir, opt)
}

// Survey reports every dataset of r for `gtstorm data info`, in registry
// order, in the data folder dir (DefaultDataDir if ""). Present datasets
// are loaded in full, so counts are those training would see.
func (r *Registry) Survey(dir string) ([]Status, error) {
	dir, err := orDefaultDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Status
	for _, s := range r.specs {
		if s.Survey != nil {
			out = append(out, s.Survey(dir)...)
		}
	}
	return out, nil
}

// Remotes returns the datasets of r that `gtstorm data fetch` downloads.
func (r *Registry) Remotes() []Remote {
	var out []Remote
	for _, s := range r.specs {
		if s.Remote != nil {
			out = append(out, s.Remote.clone())
		}
	}
	return out
}

// Remote returns the download of the dataset called name.
func (r *Registry) Remote(name string) (Remote, error) {
	if s, ok := r.Spec(name); ok && s.Remote != nil {
		return *s.Remote, nil
	}
	var names []string
	for _, rm := range r.Remotes() {
		names = append(names, rm.Name)
	}
	return Remote{}, fmt.Errorf("no downloadable dataset %q (want one of %v)", name, names)
}

// Names returns the dataset names Load accepts (the built-in registry's).
func Names() []string { return builtin.Names() }

// LoadWith loads a built-in dataset with options; see Load.
func LoadWith(name, dir string, opt LoadOptions) (train, test *Dataset, err error) {
	return builtin.LoadWith(name, dir, opt)
}

// Files returns the files LoadWith(name, dir, default options) reads; see
// Registry.Files.
func Files(name, dir string) ([]string, error) { return builtin.Files(name, dir, LoadOptions{}) }

// Survey reports every built-in dataset; see Registry.Survey.
func Survey(dir string) ([]Status, error) { return builtin.Survey(dir) }

// Remotes returns the built-in datasets `gtstorm data fetch` can download.
func Remotes() []Remote { return builtin.Remotes() }

// RemoteByName returns the built-in download called name.
func RemoteByName(name string) (Remote, error) { return builtin.Remote(name) }

// statusOf returns a Status of the present data at path, loaded with load.
func statusOf(name, path, dataDir, note string, fetchable bool, load func() (*Dataset, *Dataset, error)) Status {
	st := Status{Name: name, Path: path, DataDir: dataDir, Present: true, Note: note, Fetchable: fetchable}
	st.load(load)
	return st
}
