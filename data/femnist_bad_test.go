package data

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// leafRow returns an image row of n values v.
func leafRow(n int, v string) string {
	return "[" + strings.TrimSuffix(strings.Repeat(v+", ", n), ", ") + "]"
}

// TestFEMNISTBadInput refuses malformed LEAF files in one line naming the
// file and, where one is at fault, the writer.
func TestFEMNISTBadInput(t *testing.T) {
	row := leafRow(784, "0.5")
	one := func(x, y string) string {
		return `{"users": ["w1"], "num_samples": [1], "user_data": {"w1": {"x": ` + x + `, "y": ` + y + `}}}`
	}
	cases := []struct {
		name, json, writer, want string
	}{
		{"empty users", `{"users": [], "num_samples": [], "user_data": {}}`, "", "users is empty"},
		{"x/y lengths", one("["+row+", "+row+"]", "[1]"), "w1", "2 images in x but 1 labels in y"},
		{"pixel count", one("["+leafRow(783, "0.5")+"]", "[1]"), "w1", "x[0]: 783 values, want 784"},
		{"label range", one("["+row+"]", "[62]"), "w1", "y[0] = 62, want a label in 0..61"},
		{"negative label", one("["+row+"]", "[-1]"), "w1", "y[0] = -1"},
		{"fractional label", one("["+row+"]", "[1.5]"), "w1", "y[0] = 1.5"},
		{"pixel range", one("["+leafRow(784, "1.5")+"]", "[1]"), "w1", "x[0][0] = 1.5, want a pixel value in [0, 1]"},
		{"num_samples", strings.Replace(one("["+row+"]", "[1]"), `"num_samples": [1]`, `"num_samples": [3]`, 1), "w1", "num_samples says 3, user_data holds 1"},
		{"counts length", strings.Replace(one("["+row+"]", "[1]"), `"num_samples": [1]`, `"num_samples": [1, 2]`, 1), "", "1 users but 2 num_samples"},
		{"writer missing", strings.Replace(one("["+row+"]", "[1]"), `"users": ["w1"]`, `"users": ["w2"]`, 1), "w2", "in users but not in user_data"},
		{"writer extra", strings.Replace(one("["+row+"]", "[1]"), `}}}`, `}, "w2": {"x": [`+row+`], "y": [2]}}}`, 1), "w2", "in user_data but not in users"},
		{"no y", `{"users": ["w1"], "num_samples": [1], "user_data": {"w1": {"x": [` + row + `]}}}`, "w1", "want both x"},
		{"truncated", one("["+row+"]", "[1]")[:500], "w1", "truncated"},
		{"not an object", `[1, 2]`, "", "want \"{\""},
		{"no user_data", `{"users": ["w1"], "num_samples": [1]}`, "w1", "not in user_data"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "train", "bad.json")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(c.json), 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := LoadFEMNIST(dir)
			if err == nil {
				t.Fatal("loaded")
			}
			msg := err.Error()
			t.Log(msg)
			if strings.Contains(msg, "\n") || !strings.Contains(msg, path) || !strings.Contains(msg, c.want) || !strings.Contains(msg, `"`+c.writer+`"`) && c.writer != "" {
				t.Errorf("error %q, want one line naming %s, writer %q and %q", msg, path, c.writer, c.want)
			}
		})
	}
}

// TestFEMNISTWriterTwice refuses a writer in two training files, and a
// JSON file that is a folder.
func TestFEMNISTWriterTwice(t *testing.T) {
	dir := writeLEAF(t, t.TempDir(), leafSet{{{1, 2}, {1, 1}}, {{2}, {2}}}, nil)
	_, _, err := LoadFEMNIST(dir)
	if err == nil || !strings.Contains(err.Error(), `writer "`+leafName(2)+`": also in`) {
		t.Errorf("writer in two files: %v", err)
	}
	dir = writeLEAF(t, t.TempDir(), leafSet{{{1}, {1}}}, nil)
	if err := os.Mkdir(filepath.Join(dir, "train", "z.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, err := LoadFEMNIST(dir); err == nil || !strings.Contains(err.Error(), "z.json") || !strings.Contains(err.Error(), "directory") {
		t.Errorf("a folder named .json: %v", err)
	}
}
