package train

import "testing"

// TestDataNameCoarse: a run on CIFAR-100's coarse labels is named apart
// from one on its fine labels; every other name stays as it was.
func TestDataNameCoarse(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Dataset: "mnist"}, "mnist"},
		{Config{Dataset: "cifar10"}, "cifar10"},
		{Config{Dataset: "cifar100"}, "cifar100"},
		{Config{Dataset: "cifar100", DataDir: "/data"}, "cifar100"},
		{Config{Dataset: "cifar100", CoarseLabels: true}, "cifar100-coarse"},
		{Config{Dataset: "cifar100", DataDir: "/data", CoarseLabels: true}, "cifar100-coarse"},
		{Config{Dataset: "libsvm", DataDir: "/data/a8a"}, "a8a"},
		{Config{Dataset: "femnist"}, "femnist"},
	} {
		if got := tc.cfg.DataName(); got != tc.want {
			t.Errorf("%+v: DataName %q, want %q", tc.cfg, got, tc.want)
		}
	}
}
