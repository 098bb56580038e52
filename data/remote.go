package data

import (
	"slices"
)

// LibSVMBaseURL is where the LibSVM datasets are published.
const LibSVMBaseURL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"

// Remote describes a downloadable dataset: the published files and how to
// check them. Fetch and FetchRemote use it; a dataset's registry entry
// (Spec.Remote) holds it.
type Remote struct {
	Name string
	// Format is how the files are unpacked when Unpack is nil: "cifar10" (a
	// tar.gz of cifar-10-batches-bin/) or "libsvm".
	Format string
	Files  []RemoteFile
	Note   string // shown by `gtstorm data fetch` (what the files are, what is verified)
	// Unpack, if set, turns the verified download of f (size and MD5
	// checked) into out, a file or a folder as f.Dest names, and checks its
	// content.
	Unpack func(download, out string, f RemoteFile) error
}

// RemoteFile is one published file of a Remote.
type RemoteFile struct {
	URL  string // https address at the publisher
	Size int64  // exact size in bytes as published, 0 if unknown
	MD5  string // MD5 as published (lower-case hex), "" if none
	// Dest is the file (libsvm, idx) or folder (cifar10, cifar100) it
	// becomes, relative to the data folder.
	Dest string
	// Rows is the published sample count: of the file (libsvm, idx), of
	// each data_batch_*.bin and test_batch.bin (cifar10) or of train.bin
	// (cifar100). 0 skips the check.
	Rows int
	// TestRows is the published sample count of an archive's test file
	// where it differs from Rows (cifar100's test.bin). 0 skips the check.
	TestRows int
	// Features is the published feature count of a LibSVM file; no index may
	// exceed it. 0 skips the check.
	Features int
}

// clone returns a copy of r that shares no slice with it.
func (r Remote) clone() Remote {
	r.Files = slices.Clone(r.Files)
	return r
}

// libsvmRemote returns the download of the LibSVM set name. The LibSVM
// site publishes no checksums, so its files are checked by parsing them
// completely and comparing the sample and feature counts with those on the
// site.
func libsvmRemote(name string) (Remote, bool) {
	switch name {
	case "a9a":
		return Remote{
			Name: "a9a", Format: "libsvm",
			Files: []RemoteFile{
				{URL: LibSVMBaseURL + "a9a", Dest: "a9a", Rows: 32561, Features: 123},
				{URL: LibSVMBaseURL + "a9a.t", Dest: "a9a.t", Rows: 16281, Features: 123},
			},
			Note: "LibSVM a9a (UCI Adult), training and test; no checksum is published, so the files are parsed and their sample and feature counts checked",
		}, true
	case "ijcnn1":
		return Remote{
			Name: "ijcnn1", Format: "libsvm",
			Files: []RemoteFile{
				{URL: LibSVMBaseURL + "ijcnn1.bz2", Dest: "ijcnn1", Rows: 49990, Features: 22},
				{URL: LibSVMBaseURL + "ijcnn1.t.bz2", Dest: "ijcnn1.t", Rows: 91701, Features: 22},
			},
			Note: "LibSVM ijcnn1, training (49,990) and test; no checksum is published, so the files are parsed and their sample and feature counts checked",
		}, true
	case "rcv1":
		return Remote{
			Name: "rcv1", Format: "libsvm",
			Files: []RemoteFile{
				{URL: LibSVMBaseURL + "rcv1_train.binary.bz2", Dest: "rcv1", Rows: 20242, Features: 47236},
			},
			Note: "LibSVM rcv1.binary, the 20,242-sample training file the paper uses (the 677,399-sample test file is not fetched); no checksum is published, so the file is parsed and its sample and feature counts checked",
		}, true
	}
	return Remote{}, false
}
