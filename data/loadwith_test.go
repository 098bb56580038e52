package data

import (
	"path/filepath"
	"testing"
)

// TestLoadWithCIFARDefaultDir: with no folder given, CIFAR-10 is read from
// the default data folder (where `data fetch` puts it), normalised on request.
func TestLoadWithCIFARDefaultDir(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	def, err := DefaultDataDir()
	if err != nil {
		t.Fatal(err)
	}
	smallCIFAR(t, filepath.Join(def, CIFARDir), 4, 3)
	for _, norm := range []bool{false, true} {
		train, test, err := LoadWith("cifar10", "", LoadOptions{Normalize: norm})
		if err != nil {
			t.Fatalf("normalize %v: %v", norm, err)
		}
		if train.Len() != 20 || test.Len() != 3 {
			t.Errorf("normalize %v: %d training and %d test samples, want 20 and 3", norm, train.Len(), test.Len())
		}
		if got := train.Mean != nil; got != norm {
			t.Errorf("normalize %v: training set normalised = %v", norm, got)
		}
	}
}

// TestLoadWithFeatures: a fixed feature count applies to the LibSVM
// training and test files alike; 0 takes the larger of the two.
func TestLoadWithFeatures(t *testing.T) {
	a8a := filepath.Join(sharedDir(t), "libsvm", "a8a")
	for _, tc := range []struct{ features, want int }{{0, 123}, {200, 200}} {
		train, test, err := LoadWith("libsvm", a8a, LoadOptions{Features: tc.features})
		if err != nil {
			t.Fatal(err)
		}
		if train.Dim() != tc.want || test.Dim() != tc.want {
			t.Errorf("features %d: dims %d and %d, want %d", tc.features, train.Dim(), test.Dim(), tc.want)
		}
	}
	if _, _, err := LoadWith("libsvm", a8a, LoadOptions{Features: 50}); err == nil {
		t.Error("features 50 accepted a file with indices up to 123")
	}
}
