package data

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/gtstorm/gtstorm/internal/inputfile"
)

// The registry entry of FEMNIST (LEAF JSON), its sizes and class names.

// FEMNISTFetchNote is what `gtstorm data fetch femnist` says: LEAF
// publishes no download of its JSON with checksums, only the scripts that
// build it from NIST Special Database 19.
const FEMNISTFetchNote = "LEAF publishes no checksummed download of FEMNIST's JSON: build it with LEAF's scripts " +
	"(git clone https://github.com/TalwalkarLab/leaf; cd leaf/data/femnist; ./preprocess.sh -s niid --sf 1.0 -k 0 -t sample) " +
	"and train with --dataset femnist --data-dir leaf/data/femnist/data"

// femnistFull is the size of LEAF's full FEMNIST (805,263 images of 3,550
// writers), split 9:1 as preprocess.sh's -t sample does; the estimate
// where no files are there to count.
const femnistFull = 805263

// femnistNames are the class names by label: LEAF's relabel_class maps
// digits to 0-9, capitals to 10-35 and small letters to 36-61.
var femnistNames = func() []string {
	var names []string
	for _, r := range [][2]rune{{'0', '9'}, {'A', 'Z'}, {'a', 'z'}} {
		for c := r[0]; c <= r[1]; c++ {
			names = append(names, string(c))
		}
	}
	return names
}()

// femnistSpec is FEMNIST in LEAF's JSON format (see LoadFEMNIST).
func femnistSpec() Spec {
	return Spec{
		Name: "femnist", Model: "fedavg-cnn", Writers: true,
		Load: func(dir string, _ LoadOptions) (*Dataset, *Dataset, error) {
			return LoadFEMNIST(dir)
		},
		Files: func(dir string, _ LoadOptions) ([]string, error) {
			folder, err := femnistFolder(dir)
			if err != nil {
				return nil, nil // nothing to fingerprint; the load reports it
			}
			return slices.Concat(leafFiles(filepath.Join(folder, "train")), leafFiles(filepath.Join(folder, "test"))), nil
		},
		Sizes:      func(dir string, _ LoadOptions) Sizes { return femnistSizes(dir) },
		Survey:     surveyFEMNIST,
		ClassNames: func(string, LoadOptions) []string { return slices.Clone(femnistNames) },
		FetchNote:  FEMNISTFetchNote,
	}
}

// femnistSizes counts the samples from the num_samples of each file's
// head, without reading user_data; LEAF's full set where there are no
// files or a file does not list num_samples before user_data.
func femnistSizes(dir string) Sizes {
	train, test := femnistFull*9/10, femnistFull-femnistFull*9/10
	largest, counted := train/36, false // LEAF writes the full set in 36 files
	if folder, err := femnistFolder(dir); err == nil {
		n, big, ok := countLEAF(filepath.Join(folder, "train"))
		m, big2, ok2 := countLEAF(filepath.Join(folder, "test"))
		if ok && ok2 {
			train, test, largest, counted = n, m, max(big, big2), true
		}
	}
	const sample = femnistPixels + 1 + 4 // pixels, label, writer id
	detail := fmt.Sprintf("FEMNIST (LEAF), %d images", train+test)
	if !counted {
		detail = fmt.Sprintf("FEMNIST (LEAF), about %d images (the full set)", train+test)
	}
	return Sizes{
		Train: train, Test: test, Shape: []int{1, femnistSide, femnistSide}, Classes: femnistClasses,
		Bytes: int64(train+test) * sample,
		// The sets grow by doubling, and a file's writers are held once
		// more until copied.
		Load:   int64(train+largest)*(femnistPixels+1) + 1<<20,
		Detail: detail,
	}
}

// countLEAF sums num_samples over the JSON files of dir, returning the
// total and the largest file's; ok false when a file cannot be counted
// from its head. A folder without JSON files counts 0.
func countLEAF(dir string) (total, largest int, ok bool) {
	for _, p := range leafFiles(dir) {
		n, ok := leafHeadCount(p)
		if !ok {
			return 0, 0, false
		}
		total, largest = total+n, max(largest, n)
	}
	return total, largest, true
}

// leafHeadCount returns the sum of num_samples of the LEAF file at path,
// read from the keys before user_data (LEAF writes users, num_samples,
// user_data in that order); false if user_data comes first or the head
// does not parse.
func leafHeadCount(path string) (int, bool) {
	f, _, err := inputfile.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	if delim(dec, '{', "") != nil {
		return 0, false
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil || key == "user_data" {
			return 0, false
		}
		if key != "num_samples" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0, false
			}
			continue
		}
		var counts []int
		if dec.Decode(&counts) != nil {
			return 0, false
		}
		total := 0
		for _, c := range counts {
			total += max(c, 0)
		}
		return total, true
	}
	return 0, false
}

// surveyFEMNIST reports FEMNIST in the data folder dir: dir itself when it
// is a LEAF folder, else its femnist folder.
func surveyFEMNIST(dir string) []Status {
	folder, err := femnistFolder(dir)
	if err != nil {
		return []Status{{Name: "femnist", Path: filepath.Join(dir, FEMNISTDir), DataDir: dir,
			Note: "not present: LEAF's JSON (train/*.json, test/*.json); run gtstorm data fetch femnist to see how to build it"}}
	}
	return []Status{statusOf("femnist", folder, dir, "FEMNIST, LEAF JSON with writers (--partition natural)", false,
		func() (*Dataset, *Dataset, error) { return LoadFEMNIST(folder) })}
}
