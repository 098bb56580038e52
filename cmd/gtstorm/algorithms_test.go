package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCompareFiveAlgorithms: one compare command runs the five algorithms
// at an equal budget of samples on LibSVM data, on a static, an exponential
// and a link-failure graph; every run stays within the budget and the table
// names each algorithm's rounds.
func TestCompareFiveAlgorithms(t *testing.T) {
	needA8A(t)
	const budget = 2400 // samples per node
	for _, graph := range [][]string{
		{"--topology", "ring"},
		{"--topology", "exp", "--nodes", "8"},
		{"--topology", "er", "--pc", "0.5", "--link-drop", "0.3"},
	} {
		t.Run(graph[1], func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "grid")
			args := append([]string{"compare", "--dataset", "libsvm", "--data-dir", a8a,
				"--algos", "dsgd,d2,gnsd,d-get,gt-storm", "--partitions", "label",
				"--budget", "samples=" + strconv.Itoa(budget), "--batch", "4", "--period", "50", "--big-batch", "200",
				"--eta0", "0.1", "--eval-every", "100", "--grad-samples", "20", "--local-eval", "100",
				"--out", out}, graph...)
			if b, err := gtstorm(t, args...).CombinedOutput(); err != nil {
				t.Fatalf("compare: %v\n%s", err, b)
			}
			rows, col := readResults(t, out, 5)
			iters := map[string]int{}
			for _, r := range rows[1:] {
				nodes, _ := strconv.Atoi(r[col["nodes"]])
				samples, _ := strconv.ParseFloat(r[col["samples"]], 64)
				iters[r[col["algo"]]], _ = strconv.Atoi(r[col["iters"]])
				// D² on the directed exponential graph is outside its theory
				// and may diverge (README); the grid records it and goes on.
				diverged := strings.HasPrefix(r[col["status"]], "diverged")
				if r[col["algo"]] == "d2" && graph[1] == "exp" && diverged {
					continue
				}
				if perNode := samples / float64(nodes); perNode > budget || perNode < budget-200 {
					t.Errorf("%s: %.0f samples per node, want about the budget %d", r[col["algo"]], perNode, budget)
				}
				if r[col["status"]] != "finished" {
					t.Errorf("%s: status %q", r[col["algo"]], r[col["status"]])
				}
			}
			if iters["dsgd"] != budget/4 || iters["gt-storm"] >= iters["dsgd"] || iters["d-get"] >= iters["gt-storm"] {
				t.Errorf("rounds %v: want dsgd %d, gt-storm about half, d-get fewer still", iters, budget/4)
			}
			table, err := os.ReadFile(filepath.Join(out, "table.md"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(table), "(600 rounds)") || !strings.Contains(string(table), "equal budget of 2400 samples") {
				t.Errorf("table.md does not name the rounds and the budget:\n%s", table)
			}
		})
	}
}

// TestCompareCompressedOnNetworks: compare runs CHOCO with two compressors
// beside DSGD on two simulated networks; results.csv has each run's
// simulated seconds, the table says what reached the target, and the slow
// network takes longer for the same rounds.
func TestCompareCompressedOnNetworks(t *testing.T) {
	needA8A(t)
	out := filepath.Join(t.TempDir(), "grid")
	args := []string{"compare", "--dataset", "libsvm", "--data-dir", a8a,
		"--algos", "dsgd,choco:topk:0.1,choco:qsgd:7", "--partitions", "iid",
		"--networks", "1ms/1Gbit,50ms/10Mbit", "--compute", "1ms", "--target-acc", "0.7",
		"--iters", "60", "--batch", "4", "--eta0", "0.1", "--eval-every", "20", "--grad-samples", "20", "--local-eval", "100",
		"--out", out}
	if b, err := gtstorm(t, args...).CombinedOutput(); err != nil {
		t.Fatalf("compare: %v\n%s", err, b)
	}
	rows, col := readResults(t, out, 6)
	sim := map[string]float64{}
	bytes := map[string]float64{}
	for _, r := range rows[1:] {
		sim[r[col["setting"]]], _ = strconv.ParseFloat(r[col["sim_seconds"]], 64)
		bytes[r[col["setting"]]], _ = strconv.ParseFloat(r[col["bytes_sent_per_node"]], 64)
	}
	for _, a := range []string{"dsgd", "choco:topk:0.1", "choco:qsgd:7"} {
		fast, slow := sim[a+" / iid / 1ms/1Gbit"], sim[a+" / iid / 50ms/10Mbit"]
		if !(fast > 0.06) || !(slow > fast+60*0.049) {
			t.Errorf("%s: %.3f simulated seconds on the fast network, %.3f on the slow one", a, fast, slow)
		}
	}
	if b := bytes["choco:topk:0.1 / iid / 1ms/1Gbit"]; !(b < bytes["dsgd / iid / 1ms/1Gbit"]/4) {
		t.Errorf("top-k 10%% sent %.0f bytes per node, DSGD %.0f: want at least 4 times fewer", b, bytes["dsgd / iid / 1ms/1Gbit"])
	}
	table, err := os.ReadFile(filepath.Join(out, "table.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(table), "To reach test_acc ≥ 0.7") || !strings.Contains(string(table), "iid / 50ms/10Mbit") {
		t.Errorf("table.md has no time-to-target table or no network columns:\n%s", table)
	}
}

// readResults reads a grid's results.csv, which must hold runs runs, and
// returns its lines (the header first) and each column's index by name.
func readResults(t *testing.T, out string, runs int) ([][]string, map[string]int) {
	t.Helper()
	f, err := os.Open(filepath.Join(out, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != runs+1 {
		t.Fatalf("results.csv: %d rows (%v), want a header and %d runs", len(rows), err, runs)
	}
	col := map[string]int{}
	for k, name := range rows[0] {
		col[name] = k
	}
	return rows, col
}
