package data

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkLoadFEMNIST loads a LEAF file of 20 writers of 50 samples each,
// as data_to_json.py writes it (about 13 MB), and reports MB/s.
func BenchmarkLoadFEMNIST(b *testing.B) {
	dir := b.TempDir()
	ws, counts := make([]int, 20), make([]int, 20)
	for i := range ws {
		ws[i], counts[i] = i, 50
	}
	file := leafJSON(ws, counts)
	for _, sub := range []string{"train", "test"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "train", "a.json"), []byte(file), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(file)))
	for b.Loop() {
		if _, err := loadLEAFSet(filepath.Join(dir, "train"), "femnist-train"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLeafPixelsNumber: the fast path of leafPixels.number gives
// strconv.ParseFloat's value, bit for bit, for every grey level as LEAF
// writes it and for numbers that take the slow path.
func TestLeafPixelsNumber(t *testing.T) {
	var texts []string
	for k := range 256 {
		texts = append(texts, pyFloat(float64(k)/255), strconv.FormatFloat(float64(k)/255, 'f', 17, 64))
	}
	texts = append(texts, "0", "1", "0.5", "1e-3", "2.5E-1", "-0.0", "0.000000000000000000000001",
		"0.12345678901234567890123", "9007199254740993", "0.9007199254740993")
	for _, s := range texts {
		p := leafPixels{b: []byte(s + "]")}
		got, err := p.number()
		want, _ := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) || p.pos != len(s) {
			t.Errorf("number(%q) = %v (%v), read %d bytes; want %v and %d", s, got, err, p.pos, want, len(s))
		}
	}
	if _, err := (&leafPixels{b: []byte("]")}).number(); err == nil {
		t.Error("number of no text: no error")
	}
}
