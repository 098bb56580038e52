package models

import (
	"strings"
	"testing"
)

// TestCCTIsSHILabs builds cct:2,2,1,16/3x2 and checks it against the
// import of SHI-Labs' CCT module of that shape (testdata/onnx/cct_shi,
// made by make_fixtures.py from their code): the same parameter layout,
// and at the file's weights the same loss and gradient, bit for bit.
func TestCCTIsSHILabs(t *testing.T) { zooIsImport(t, "cct:2,2,1,16/3x2", "cct_shi", true) }

// TestParseCCT checks the names of Compact Convolutional Transformers New
// takes and refuses.
func TestParseCCT(t *testing.T) {
	for _, c := range []struct {
		name string
		want CCTConfig
		err  string
	}{
		{"cct:7/3x1", CCTConfig{7, 4, 2, 256, 3, 1}, ""},
		{"cct:2/3x2", CCTConfig{2, 2, 1, 128, 3, 2}, ""},
		{"cct:14/7x2", CCTConfig{14, 6, 3, 384, 7, 2}, ""},
		{"cct:2,2,1,16/3x2", CCTConfig{2, 2, 1, 16, 3, 2}, ""},
		{"cct:5/3x1", CCTConfig{}, "the paper has no CCT-5 (2, 4, 6, 7 or 14 layers); give its size as cct:5,HEADS,MLP_RATIO,DIM/3x1"},
		{"cct:7", CCTConfig{}, "want cct:LAYERS/KxN"},
		{"cct:7/3", CCTConfig{}, "want cct:LAYERS/KxN"},
		{"cct:7,4,2/3x1", CCTConfig{}, "want cct:LAYERS/KxN"},
		{"cct:7/0x1", CCTConfig{}, `"0" is not a whole number from 1`},
		{"cct:2,3,1,16/3x1", CCTConfig{}, "3 heads do not divide the width 16"},
	} {
		got, err := ParseCCT(c.name)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("ParseCCT(%q) = %+v, %v; want %+v", c.name, got, err, c.want)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseCCT(%q): error %v, want one containing %q", c.name, err, c.err)
		}
	}
	m, err := New("cct:7/3x1", []int{3, 32, 32}, 10)
	if err != nil {
		t.Fatal(err)
	}
	// 3,760,139: SHI-Labs' modules of that size on 32×32 (the paper's 3.76M).
	if m.Name() != "cct:7,4,2,256/3x1" || m.NumParams() != 3760139 {
		t.Errorf("cct:7/3x1 on CIFAR-10: %s of %d parameters, want cct:7,4,2,256/3x1 of 3,760,139 (SHI-Labs' cct_7_3x1_32)", m.Name(), m.NumParams())
	}
}
