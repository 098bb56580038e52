package train

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/gtstorm/gtstorm/data"
)

// TestLoadDataDefaultFolder: a run on CIFAR-10 without --data-dir reads the
// default data folder, where `gtstorm data fetch cifar10` puts it.
func TestLoadDataDefaultFolder(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	def, err := data.DefaultDataDir()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(def, data.CIFARDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	record := append([]byte{3}, bytes.Repeat([]byte{128}, 3072)...)
	names := []string{"test_batch.bin"}
	for k := 1; k <= 5; k++ {
		names = append(names, fmt.Sprintf("data_batch_%d.bin", k))
	}
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Repeat(record, 2), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Default()
	cfg.Dataset, cfg.DataDir = "cifar10", ""
	train, test, err := LoadData(cfg)
	if err != nil {
		t.Fatalf("cifar10 from the default folder: %v", err)
	}
	if train.Len() != 10 || test.Len() != 2 || train.Mean == nil {
		t.Errorf("loaded %d training and %d test samples (normalised: %v), want 10 and 2, normalised", train.Len(), test.Len(), train.Mean != nil)
	}
}
