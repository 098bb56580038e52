package data

import (
	"fmt"
	"slices"
)

// LibSVMBaseURL is where the LibSVM datasets are published.
const LibSVMBaseURL = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/"

// Remote describes a downloadable dataset: the published files and how to
// check them. Fetch and FetchRemote use it.
type Remote struct {
	Name   string
	Format string // "cifar10" (a tar.gz of cifar-10-batches-bin/) or "libsvm"
	Files  []RemoteFile
	Note   string // shown by `gtstorm data fetch` (what the files are, what is verified)
}

// RemoteFile is one published file of a Remote.
type RemoteFile struct {
	URL  string // https address at the publisher
	Size int64  // exact size in bytes as published, 0 if unknown
	MD5  string // MD5 as published (lower-case hex), "" if none
	// Dest is the file (libsvm) or folder (cifar10) it becomes, relative to
	// the data folder.
	Dest string
	// Rows is the published sample count: of the file (libsvm) or of each
	// data_batch_*.bin and test_batch.bin (cifar10). 0 skips the check.
	Rows int
	// Features is the published feature count of a LibSVM file; no index may
	// exceed it. 0 skips the check.
	Features int
}

// Remotes returns the datasets `gtstorm data fetch` can download. CIFAR-10 is
// checked against its published MD5 and size; the LibSVM site publishes no
// checksums, so its files are checked by parsing them completely and
// comparing the sample and feature counts with those on the site.
func Remotes() []Remote {
	return []Remote{
		{
			Name: "cifar10", Format: "cifar10",
			Files: []RemoteFile{{
				URL:  "https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",
				Size: 170052171,
				MD5:  "c32a1d4ab5d03f1284b67883e8d87530",
				Dest: CIFARDir,
				Rows: 10000,
			}},
			Note: "CIFAR-10 binary version (162 MB), checked against the MD5 published at https://www.cs.toronto.edu/~kriz/cifar.html",
		},
		{
			Name: "a9a", Format: "libsvm",
			Files: []RemoteFile{
				{URL: LibSVMBaseURL + "a9a", Dest: "a9a", Rows: 32561, Features: 123},
				{URL: LibSVMBaseURL + "a9a.t", Dest: "a9a.t", Rows: 16281, Features: 123},
			},
			Note: "LibSVM a9a (UCI Adult), training and test; no checksum is published, so the files are parsed and their sample and feature counts checked",
		},
		{
			Name: "ijcnn1", Format: "libsvm",
			Files: []RemoteFile{
				{URL: LibSVMBaseURL + "ijcnn1.bz2", Dest: "ijcnn1", Rows: 49990, Features: 22},
				{URL: LibSVMBaseURL + "ijcnn1.t.bz2", Dest: "ijcnn1.t", Rows: 91701, Features: 22},
			},
			Note: "LibSVM ijcnn1, training (49,990) and test; no checksum is published, so the files are parsed and their sample and feature counts checked",
		},
		{
			Name: "rcv1", Format: "libsvm",
			Files: []RemoteFile{
				{URL: LibSVMBaseURL + "rcv1_train.binary.bz2", Dest: "rcv1", Rows: 20242, Features: 47236},
			},
			Note: "LibSVM rcv1.binary, the 20,242-sample training file the paper uses (the 677,399-sample test file is not fetched); no checksum is published, so the file is parsed and its sample and feature counts checked",
		},
	}
}

// RemoteByName returns the Remote called name.
func RemoteByName(name string) (Remote, error) {
	rs := Remotes()
	if i := slices.IndexFunc(rs, func(r Remote) bool { return r.Name == name }); i >= 0 {
		return rs[i], nil
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	return Remote{}, fmt.Errorf("no downloadable dataset %q (want one of %v)", name, names)
}
