package detmath

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// archMath are the functions of math whose bits differ between
// architectures (assembly on some, fused on others), and the samplers of
// math/rand/v2 built on them; this package has the portable ones.
var archMath = map[string]bool{
	"Exp": true, "Exp2": true, "Expm1": true, "Log": true, "Log1p": true, "Log2": true, "Log10": true,
	"Pow": true, "Sin": true, "Cos": true, "Tan": true, "Sincos": true, "Tanh": true, "Sinh": true, "Cosh": true,
	"Atan": true, "Atan2": true, "Asin": true, "Acos": true, "Cbrt": true, "Erf": true, "Erfc": true, "Erfinv": true,
	"Gamma": true, "Lgamma": true, "Hypot": true, "NormFloat64": true, "ExpFloat64": true,
}

// drawingOnly are the folders whose floating point only draws (plots):
// their bits may differ between architectures without changing a result.
var drawingOnly = []string{"train/curves/", "internal/kernels/gen/"}

// TestNoArchMath fails where the module's (non-test) code calls one of
// archMath outside this package: a run would compute other bits on an ARM
// machine than on an x86 one.
func TestNoArchMath(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "internal/detmath" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		for _, dir := range drawingOnly {
			if strings.HasPrefix(rel, dir) {
				return nil
			}
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || !archMath[sel.Sel.Name] {
				return true
			}
			x, _ := sel.X.(*ast.Ident)
			sampler := sel.Sel.Name == "NormFloat64" || sel.Sel.Name == "ExpFloat64"
			if x != nil && x.Name == "detmath" || !sampler && (x == nil || x.Name != "math") {
				return true // a method of r *rand.Rand is a sampler; a field is not math's
			}
			t.Errorf("%s: %s: use detmath's, which gives the same bits on every architecture", fset.Position(sel.Pos()), sel.Sel.Name)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
