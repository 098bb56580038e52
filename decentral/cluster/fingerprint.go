package cluster

// Fingerprint identifies an input file of a run by content: its path on
// the rank that read it (only its base name is compared), its size and its
// SHA-256 in hex. The ranks of a run compare their input files by it
// before they train (transport's Control.AgreeInputs): the config hash
// leaves out where the data lie, which may differ between hosts.
type Fingerprint struct {
	Path   string
	Size   int64
	SHA256 string
}
