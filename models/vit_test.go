package models

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestViTIsTimms builds vit:4,16,2,2,2 and checks it against the import
// of vit_tiny.onnx, timm's VisionTransformer of that configuration that
// make_fixtures.py exports: the same parameters in the same order and
// shapes, and on the file's weights the same loss and gradient, bit for
// bit (TestImportONNXMatchesTorch checks the import against torch's).
func TestViTIsTimms(t *testing.T) { zooIsImport(t, "vit:4,16,2,2,2", "vit_tiny", false) }

// zooIsImport checks the zoo's network name on 3×16×16 samples against
// the import of the fixture testdata/onnx/fixture.onnx: the same parameter
// tensors in the same order, shapes and offsets (and names, where
// sameNames), and at the file's weights the same loss and gradient, bit
// for bit.
func zooIsImport(t *testing.T, name, fixture string, sameNames bool) {
	t.Helper()
	imported, x0 := importFixture(t, fixture)
	zoo := mustNew(t, name, []int{3, 16, 16}, 10)
	ip, zp := imported.Params(), zoo.Params()
	if len(ip) != len(zp) {
		t.Fatalf("%d parameter tensors, the import %d", len(zp), len(ip))
	}
	for i := range zp {
		if sameNames && zp[i].Name != ip[i].Name || !slices.Equal(zp[i].Shape, ip[i].Shape) || zp[i].Offset != ip[i].Offset {
			t.Errorf("tensor %d: %s %v at %d, the import's %s %v at %d", i, zp[i].Name, zp[i].Shape, zp[i].Offset, ip[i].Name, ip[i].Shape, ip[i].Offset)
		}
	}
	b := batchOf(imageSet(31, 6, 10, true, 3, 16, 16), seq(6)...)
	lz, gz := grad(t, newWorker(t, zoo), x0, b)
	li, gi := grad(t, newWorker(t, imported), x0, b)
	if math.Float32bits(lz) != math.Float32bits(li) || !slices.Equal(gz, gi) {
		t.Errorf("loss %g, the import's %g; gradients equal: %v", lz, li, slices.Equal(gz, gi))
	}
}

// TestParseViT checks the names of vision transformers New takes and
// refuses.
func TestParseViT(t *testing.T) {
	for _, c := range []struct {
		name string
		want ViTConfig
		err  string
	}{
		{"vit:4,192,12,3", ViTConfig{4, 192, 12, 3, 4}, ""},
		{"vit:7,64,6,8,2", ViTConfig{7, 64, 6, 8, 2}, ""},
		{"vit:4,16,2", ViTConfig{}, "want vit:PATCH,DIM,DEPTH,HEADS[,MLP_RATIO]"},
		{"vit:4,16,2,2,2,2", ViTConfig{}, "want vit:PATCH,DIM,DEPTH,HEADS[,MLP_RATIO]"},
		{"vit:", ViTConfig{}, "want vit:PATCH,DIM,DEPTH,HEADS[,MLP_RATIO]"},
		{"vit:0,16,2,2", ViTConfig{}, `"0" is not a whole number from 1`},
		{"vit:4,16,-1,2", ViTConfig{}, `"-1" is not a whole number from 1`},
		{"vit:4,16,2,2,x", ViTConfig{}, `"x" is not a whole number from 1`},
		{"vit:4,16,2,3", ViTConfig{}, "3 heads do not divide the width 16"},
	} {
		got, err := ParseViT(c.name)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseViT(%q) = %+v, %v; want %+v", c.name, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseViT(%q): error %v, want one containing %q", c.name, err, c.err)
		}
	}
	if _, err := New("vit:5,16,2,2", []int{1, 28, 28}, 10); err == nil || !strings.Contains(err.Error(), "multiples of its patch side 5") {
		t.Errorf("vit:5,… on 28×28: %v", err)
	}
}
