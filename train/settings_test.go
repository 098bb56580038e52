package train

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// extraFlags are the flags of the commands that call train beside the run
// settings: ConfigErrors may name them too.
var extraFlags = []string{"out", "vary", "iters", "warm-rounds", "budget"}

// TestConfigErrorsNameFlags reads every ConfigError literal in the package
// and checks that it names a registered flag, so that an error always reads
// as the user typed it.
func TestConfigErrorsNameFlags(t *testing.T) {
	var c Config
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	c.Flags(fs)
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || len(lit.Elts) == 0 {
				return true
			}
			if id, ok := lit.Type.(*ast.Ident); !ok || id.Name != "ConfigError" {
				return true
			}
			found++
			arg := lit.Elts[0]
			if kv, ok := arg.(*ast.KeyValueExpr); ok {
				arg = kv.Value
			}
			switch a := arg.(type) {
			case *ast.BasicLit:
				name, _ := strconv.Unquote(a.Value)
				if fs.Lookup(name) == nil && !slices.Contains(extraFlags, name) {
					t.Errorf("%s: ConfigError names --%s, which no command registers", fset.Position(lit.Pos()), name)
				}
			case *ast.SelectorExpr:
				// s.Name: a setting of the table, registered by Flags.
				if a.Sel.Name != "Name" {
					t.Errorf("%s: ConfigError names its flag by %s, not by a setting or a literal", fset.Position(lit.Pos()), a.Sel.Name)
				}
			default:
				t.Errorf("%s: ConfigError's flag is not a literal or a setting's name", fset.Position(lit.Pos()))
			}
			return true
		})
	}
	if found < 3 {
		t.Fatalf("found %d ConfigError literals; the test reads the wrong files", found)
	}
}

// TestSettingsTable: the run flags SPEC §8 and §14 promise (a list
// written here, not read from the table that registers them) are
// registered with help, every setting is validated from its flag form, and
// settable by a sweep when sweepable.
func TestSettingsTable(t *testing.T) {
	cfg := Default()
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	cfg.Flags(fs)
	for _, name := range []string{"dataset", "data-dir", "algo", "nodes", "topology", "pc", "partition", "iters",
		"batch", "eta0", "rho", "eval-every", "seed", "model", "momentum", "nesterov", "local-steps", "weight-decay",
		"schedule", "warmup"} {
		f := fs.Lookup(name)
		if f == nil {
			t.Errorf("--%s is not registered", name)
			continue
		}
		if f.Usage == "" {
			t.Errorf("--%s has no help", name)
		}
	}
	registered := 0
	fs.VisitAll(func(*flag.Flag) { registered++ })
	if registered != len(Settings()) {
		t.Errorf("%d flags registered for %d settings", registered, len(Settings()))
	}
	// A flag writes its field; a bad value is refused naming the flag.
	for _, tc := range []struct{ flag, value, bad, want string }{
		{"nodes", "7", "0", "--nodes 0"},
		{"eta0", "0.5", "-1", "--eta0 -1"},
		{"partition", "dirichlet:0.3", "dirichlet:0", "--partition dirichlet:0"},
		{"max-memory", "2GiB", "", ""},
	} {
		c := Default()
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.Flags(fs)
		if err := fs.Parse([]string{"--" + tc.flag, tc.value}); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("--%s %s: %v", tc.flag, tc.value, err)
		}
		if tc.bad == "" {
			continue
		}
		if err := fs.Set(tc.flag, tc.bad); err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--%s %s: err = %v, want %q", tc.flag, tc.bad, err, tc.want)
		}
	}
	if c := Default(); c.Set("seed", "3") == nil || c.Set("workers", "3") == nil {
		t.Error("a sweep may vary --seed or --workers, which --seeds sets or which cannot change results")
	}
	for _, name := range []string{"rho", "pc", "nodes", "eta0", "batch", "partition", "algo", "topology", "alpha", "mixing", "cube-root"} {
		if !slices.Contains(Sweepable(), name) {
			t.Errorf("sweep cannot vary %s", name)
		}
	}
}
