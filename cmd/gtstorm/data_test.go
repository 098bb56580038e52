package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDataInfoCommand(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a9a"), []byte("1 1:1\n-1 3:1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"data", "info", "--data-dir", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{
		"data folder: " + dir,
		"train: 60000 samples of 1x28x28, 10 classes [5923 6742 5958 6131 5842 5421 5918 6265 5851 5949]",
		"test:  10000 samples",
		"cifar10  missing  " + filepath.Join(dir, "cifar-10-batches-bin"),
		"run: gtstorm data fetch cifar10 --data-dir " + dir,
		"a9a      present  " + filepath.Join(dir, "a9a"),
		"train: 2 samples of 3, 2 classes [1 1]",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("data info output lacks %q:\n%s", want, out.String())
		}
	}

	out.Reset()
	if code := run([]string{"data", "info", "--partition", "label", "--nodes", "20"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "partition label of mnist-train (60000 samples) over 20 nodes") {
		t.Errorf("partition output lacks its header:\n%s", out.String())
	}
	// Node 19 holds the second half of digit 9 (5949 samples → 2975 and 2974).
	if !strings.Contains(out.String(), "   19     2974  [0 0 0 0 0 0 0 0 0 2974]") {
		t.Errorf("node 19 of label:20 should hold 2974 nines:\n%s", out.String())
	}
}

func TestDataCommandErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("not a LibSVM file"))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"data"}, 2, "want a subcommand"},
		{[]string{"data", "frobnicate"}, 2, `unknown subcommand "frobnicate"`},
		{[]string{"data", "fetch"}, 2, "want a dataset to fetch: fashion-mnist, cifar10, cifar100, a9a, ijcnn1, rcv1"},
		{[]string{"data", "fetch", "mnist"}, 2, `unknown dataset "mnist"`},
		{[]string{"data", "fetch", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"data", "info", "--partition", "dirichlet:0"}, 2, `--partition: partition "dirichlet:0"`},
		{[]string{"data", "info", "--partition", "iid", "--nodes", "0"}, 2, "--nodes 0"},
		{[]string{"data", "info", "--partition", "label", "--dataset", "svhn"}, 2, `--dataset "svhn"`},
		{[]string{"data", "info", "--partition", "label", "--dataset", "cifar10", "--data-dir", dir}, 1, "data_batch_1.bin"},
		{[]string{"data", "info", "--partition", "shards:10000", "--nodes", "10"}, 1, "shards:10000"},
		{[]string{"data", "fetch", "a9a", "--data-dir", dir, "--base-url", srv.URL}, 1, "fetch a9a"},
		// A data folder the failed fetch made is removed again.
		{[]string{"data", "fetch", "a9a", "--data-dir", filepath.Join(dir, "new"), "--base-url", srv.URL}, 1, "fetch a9a"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(c.args, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errb.String(), c.code, c.msg)
		}
		if strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 && c.code == 2 {
			t.Errorf("%v: error is not one line: %q", c.args, errb.String())
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("a failed fetch left %v", entries)
	}
	var out, errb bytes.Buffer
	for _, args := range [][]string{{"data", "--help"}, {"data", "fetch", "--help"}, {"data", "info", "--help"}} {
		out.Reset()
		if code := run(args, &out, &errb); code != 0 || !strings.Contains(out.String(), "Usage: gtstorm data") {
			t.Errorf("%v: exit %d, output %q", args, code, out.String())
		}
	}
}

// TestDataFetchSIGTERM: SIGTERM during a download cancels it like SIGINT,
// so that the fetch removes its temporary folder instead of being killed
// with it on disk.
func TestDataFetchSIGTERM(t *testing.T) {
	self, err := os.FindProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// A safety net: were SIGTERM not caught by the command, it would end
	// the test binary instead of failing the test.
	guard := make(chan os.Signal, 1)
	signal.Notify(guard, syscall.SIGTERM)
	t.Cleanup(func() { signal.Stop(guard) })
	sent := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The command asks for the file only once it listens for signals.
		sent <- self.Signal(syscall.SIGTERM)
		select {
		case <-r.Context().Done(): // the fetch gave up the download
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := run([]string{"data", "fetch", "a9a", "--data-dir", dir, "--base-url", srv.URL}, &out, &errb)
	if err := <-sent; err != nil {
		t.Skipf("cannot send SIGTERM to the test process here: %v", err)
	}
	if code != 1 || !strings.Contains(errb.String(), "terminated signal received") {
		t.Errorf("exit %d, stderr %q; want exit 1 with the download cancelled", code, errb.String())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a fetch stopped by SIGTERM left %v", entries)
	}
}
