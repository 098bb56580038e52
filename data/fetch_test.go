package data

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// cifarArchive returns a gzipped tar in the layout of the official
// cifar-10-binary.tar.gz with nPer records per batch file. edit may change
// the members before they are written.
func cifarArchive(t *testing.T, nPer int, edit func(files map[string][]byte)) []byte {
	t.Helper()
	files := map[string][]byte{
		"batches.meta.txt": []byte("airplane\nautomobile\nbird\ncat\ndeer\ndog\nfrog\nhorse\nship\ntruck\n"),
		"readme.html":      []byte("<meta HTTP-EQUIV=\"REFRESH\" content=\"0; url=http://www.cs.toronto.edu/~kriz/cifar.html\">\n"),
	}
	for f, name := range cifarTrainFiles {
		files[name] = cifarRecords(nPer, func(i int) byte { return byte((i + f) % 10) })
	}
	files[cifarTestFile] = cifarRecords(nPer, func(i int) byte { return byte(i % 10) })
	if edit != nil {
		edit(files)
	}
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	tw := tar.NewWriter(z)
	tw.WriteHeader(&tar.Header{Name: CIFARDir + "/", Typeflag: tar.TypeDir, Mode: 0o755})
	for _, name := range []string{"batches.meta.txt", "data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin", "readme.html", "test_batch.bin", "../evil", "/abs"} {
		b, ok := files[name]
		if !ok {
			continue
		}
		member := CIFARDir + "/" + name
		if strings.HasPrefix(name, "..") || strings.HasPrefix(name, "/") {
			member = name // a hostile member outside the folder
		}
		if err := tw.WriteHeader(&tar.Header{Name: member, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(b))}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	z.Close()
	return buf.Bytes()
}

// fileServer serves files by the last element of the request path and
// counts requests. A file whose name is in lie announces a larger
// Content-Length than it sends.
type fileServer struct {
	mu    sync.Mutex
	files map[string][]byte
	lie   map[string]bool
	hits  int
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits++
	b, ok := s.files[path.Base(r.URL.Path)]
	lie := s.lie[path.Base(r.URL.Path)]
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	if lie {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)+1000))
	} else {
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	}
	w.Write(b)
}

func newFileServer(t *testing.T, files map[string][]byte) (*fileServer, *httptest.Server) {
	fs := &fileServer{files: files, lie: map[string]bool{}}
	srv := httptest.NewTLSServer(fs)
	t.Cleanup(srv.Close)
	return fs, srv
}

func md5hex(b []byte) string {
	s := md5.Sum(b)
	return hex.EncodeToString(s[:])
}

// cifarRemote is the real CIFAR-10 remote with the small archive's checks.
func cifarRemote(archive []byte, nPer int) Remote {
	r, _ := RemoteByName("cifar10")
	r.Files[0].Size = int64(len(archive))
	r.Files[0].MD5 = md5hex(archive)
	r.Files[0].Rows = nPer
	return r
}

// leftovers lists what a fetch left in dir apart from want.
func leftovers(t *testing.T, dir string, want ...string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		found := false
		for _, w := range want {
			found = found || e.Name() == w
		}
		if !found {
			out = append(out, e.Name())
		}
	}
	return out
}

func TestFetchCIFAR10(t *testing.T) {
	archive := cifarArchive(t, 3, func(files map[string][]byte) {
		files["../evil"] = []byte("never written")
	})
	fsrv, srv := newFileServer(t, map[string][]byte{"cifar-10-binary.tar.gz": archive})
	dir := t.TempDir()
	var log bytes.Buffer
	opt := FetchOptions{BaseURL: srv.URL + "/mirror/", Client: srv.Client(), Progress: &log}
	err := FetchRemote(context.Background(), cifarRemote(archive, 3), dir, opt)
	wantErr(t, err, "outside the archive")
	if l := leftovers(t, dir); len(l) != 0 {
		t.Fatalf("a failed fetch left %v", l)
	}

	archive = cifarArchive(t, 3, nil)
	fsrv.files["cifar-10-binary.tar.gz"] = archive
	if err := FetchRemote(context.Background(), cifarRemote(archive, 3), dir, opt); err != nil {
		t.Fatal(err)
	}
	if l := leftovers(t, dir, CIFARDir); len(l) != 0 {
		t.Fatalf("fetch left %v besides %s", l, CIFARDir)
	}
	train, test, err := Load("cifar10", dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 15 || test.Len() != 3 || train.Labels[3] != 1 {
		t.Fatalf("fetched CIFAR-10: %d/%d samples, label[3] = %d; want 15/3 and 1", train.Len(), test.Len(), train.Labels[3])
	}
	for _, want := range []string{"downloading", "(100%)", "ready: " + filepath.Join(dir, CIFARDir)} {
		if !strings.Contains(log.String(), want) {
			t.Fatalf("progress output lacks %q:\n%s", want, log.String())
		}
	}

	// Present: nothing is downloaded again, unless forced.
	hits := fsrv.hits
	log.Reset()
	if err := FetchRemote(context.Background(), cifarRemote(archive, 3), dir, opt); err != nil {
		t.Fatal(err)
	}
	if fsrv.hits != hits || !strings.Contains(log.String(), "already present") {
		t.Fatalf("a present dataset was downloaded again (%d requests, log %q)", fsrv.hits-hits, log.String())
	}
	archive2 := cifarArchive(t, 4, nil)
	fsrv.files["cifar-10-binary.tar.gz"] = archive2
	opt.Force = true
	opt.Bar = true
	if err := FetchRemote(context.Background(), cifarRemote(archive2, 4), dir, opt); err != nil {
		t.Fatal(err)
	}
	if train, _, err = LoadCIFAR10(dir, false); err != nil || train.Len() != 20 {
		t.Fatalf("after --force: %v samples, %v; want 20", train, err)
	}
	if l := leftovers(t, dir, CIFARDir); len(l) != 0 {
		t.Fatalf("forced fetch left %v", l)
	}
}

// Every broken download fails and leaves no dataset (and no temporary
// folder) behind.
func TestFetchRejectsBadDownloads(t *testing.T) {
	good := cifarArchive(t, 2, nil)
	badLabel := cifarArchive(t, 2, func(f map[string][]byte) { f["data_batch_4.bin"][0] = 12 })
	shortRec := cifarArchive(t, 2, func(f map[string][]byte) { f["test_batch.bin"] = f["test_batch.bin"][:100] })
	noTest := cifarArchive(t, 2, func(f map[string][]byte) { delete(f, "test_batch.bin") })
	cases := []struct {
		name   string
		served []byte
		remote Remote
		lie    bool
		errors []string
	}{
		{"real catalog: not the official archive", good, func() Remote { r, _ := RemoteByName("cifar10"); return r }(), false,
			[]string{"fetch cifar10", "server announces", "published size is 170052171"}},
		{"MD5 mismatch", good, func() Remote { r := cifarRemote(good, 2); r.Files[0].MD5 = md5hex(nil); return r }(), false,
			[]string{"MD5", "published MD5 is " + md5hex(nil)}},
		{"archive cut in half", good[:len(good)/2], func() Remote { r := cifarRemote(good, 2); r.Files[0].Size, r.Files[0].MD5 = 0, ""; return r }(), false,
			[]string{"truncated"}},
		{"connection drops", good, func() Remote { r := cifarRemote(good, 2); r.Files[0].Size = 0; return r }(), true,
			[]string{"download interrupted after"}},
		{"label out of range", badLabel, cifarRemote(badLabel, 2), false, []string{"data_batch_4.bin", "label 12 is out of range"}},
		{"wrong record length", shortRec, func() Remote { r := cifarRemote(shortRec, 2); r.Files[0].Rows = 0; return r }(), false,
			[]string{"test_batch.bin", "not a whole number of 3073-byte"}},
		{"member missing", noTest, cifarRemote(noTest, 2), false, []string{"archive holds no " + CIFARDir + "/test_batch.bin"}},
		{"rows differ from published", good, cifarRemote(good, 3), false, []string{"data_batch_1.bin", "want 3 records"}},
		{"not gzip", []byte("<html>a login page</html>"), func() Remote {
			r := cifarRemote(good, 2)
			r.Files[0].Size, r.Files[0].MD5 = 0, ""
			return r
		}(), false, []string{"not a gzip-compressed tar archive"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsrv, srv := newFileServer(t, map[string][]byte{"cifar-10-binary.tar.gz": c.served})
			fsrv.lie["cifar-10-binary.tar.gz"] = c.lie
			dir := t.TempDir()
			err := FetchRemote(context.Background(), c.remote, dir, FetchOptions{BaseURL: srv.URL, Client: srv.Client()})
			wantErr(t, err, c.errors...)
			if l := leftovers(t, dir); len(l) != 0 {
				t.Fatalf("a failed fetch left %v", l)
			}
			if _, _, err := Load("cifar10", dir); err == nil {
				t.Fatal("a dataset loads after a failed fetch")
			}
		})
	}
	t.Run("not found", func(t *testing.T) {
		_, srv := newFileServer(t, nil)
		err := Fetch(context.Background(), "cifar10", t.TempDir(), FetchOptions{BaseURL: srv.URL, Client: srv.Client()})
		wantErr(t, err, "404")
	})
	t.Run("cancelled", func(t *testing.T) {
		_, srv := newFileServer(t, map[string][]byte{"cifar-10-binary.tar.gz": good})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		dir := t.TempDir()
		err := FetchRemote(ctx, cifarRemote(good, 2), dir, FetchOptions{BaseURL: srv.URL, Client: srv.Client()})
		wantErr(t, err, "context canceled")
		if l := leftovers(t, dir); len(l) != 0 {
			t.Fatalf("a cancelled fetch left %v", l)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		wantErr(t, Fetch(context.Background(), "mnist", t.TempDir(), FetchOptions{}), `no downloadable dataset "mnist"`)
		wantErr(t, Fetch(context.Background(), "a9a", t.TempDir(), FetchOptions{BaseURL: "ftp://x"}), "want an http:// or https:// address")
	})
}

func TestFetchLibSVM(t *testing.T) {
	small, err := os.ReadFile(filepath.Join("testdata", "small.libsvm"))
	if err != nil {
		t.Fatal(err)
	}
	smallBz2, err := os.ReadFile(filepath.Join("testdata", "small.libsvm.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	fsrv, srv := newFileServer(t, map[string][]byte{
		"a9a": small, "a9a.t": []byte("-1 1:1\n+1 2:1 7:1\n"),
		"ijcnn1.bz2": smallBz2, "ijcnn1.t.bz2": smallBz2,
	})
	opt := FetchOptions{BaseURL: srv.URL, Client: srv.Client()}
	dir := t.TempDir()

	// The real catalog's published counts reject these small files.
	wantErr(t, Fetch(context.Background(), "a9a", dir, opt), "fetch a9a", "holds 6 samples, the publisher lists 32561")
	wantErr(t, Fetch(context.Background(), "ijcnn1", dir, opt), "fetch ijcnn1", "publisher lists 49990")
	if l := leftovers(t, dir); len(l) != 0 {
		t.Fatalf("failed fetches left %v", l)
	}

	a9a, _ := RemoteByName("a9a")
	a9a.Files[0].Rows, a9a.Files[1].Rows = 6, 2
	a9a.Files[0].Features, a9a.Files[1].Features = 7, 7
	if err := FetchRemote(context.Background(), a9a, dir, opt); err != nil {
		t.Fatal(err)
	}
	train, test, err := Load("a9a", dir)
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 6 || test.Len() != 2 || train.Shape[0] != 7 || test.Shape[0] != 7 {
		t.Fatalf("a9a: %d/%d samples of %v/%v, want 6/2 of [7]", train.Len(), test.Len(), train.Shape, test.Shape)
	}

	ij, _ := RemoteByName("ijcnn1")
	ij.Files[0].Rows, ij.Files[1].Rows = 6, 6
	if err := FetchRemote(context.Background(), ij, dir, opt); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "ijcnn1"))
	if !bytes.Equal(raw, small) {
		t.Fatal("ijcnn1 was not stored decompressed")
	}
	if l := leftovers(t, dir, "a9a", "a9a.t", "ijcnn1", "ijcnn1.t"); len(l) != 0 {
		t.Fatalf("fetches left %v", l)
	}

	// Features above the published count, a malformed test file: rejected,
	// and the training file is not left alone without its test file.
	ij.Files[0].Features = 3
	wantErr(t, FetchRemote(context.Background(), ij, t.TempDir(), opt), "beyond the 3 features")
	fsrv.files["a9a.t"] = []byte("1 1:1\n1 3:1 2:1\n")
	a9a.Files[1].Rows = 0
	fresh := t.TempDir()
	wantErr(t, FetchRemote(context.Background(), a9a, fresh, opt), "a9a.t", "line 2", "index 2 after 3")
	if l := leftovers(t, fresh); len(l) != 0 {
		t.Fatalf("a failed fetch left %v", l)
	}
}

func TestRemotesCatalog(t *testing.T) {
	for _, r := range Remotes() {
		if _, err := unpacker(r); len(r.Files) == 0 || err != nil {
			t.Fatalf("%s: bad entry %+v", r.Name, r)
		}
		for _, f := range r.Files {
			if !strings.HasPrefix(f.URL, "https://") || f.Dest == "" || f.Rows == 0 {
				t.Fatalf("%s: file %+v must be https with a destination and a published sample count", r.Name, f)
			}
			if r.Format == "libsvm" && f.Features == 0 {
				t.Fatalf("%s: LibSVM file %s lacks its published feature count", r.Name, f.URL)
			}
		}
		if r.Format == "libsvm" && r.Files[0].Dest != r.Name {
			t.Fatalf("%s: training file stored as %s; Load looks for %s", r.Name, r.Files[0].Dest, r.Name)
		}
	}
	published := []struct {
		name string
		file int
		md5  string
		size int64
		dest string
	}{
		{"cifar10", 0, "c32a1d4ab5d03f1284b67883e8d87530", 170052171, CIFARDir},
		{"cifar100", 0, "03b5dce01913d631647c71ecec9e9cb8", 168513733, CIFAR100Dir},
		{"fashion-mnist", 0, "8d4fb7e6c68d591d4c3dfef9ec88bf0d", 26421880, "fashion-mnist/train-images-idx3-ubyte.gz"},
		{"fashion-mnist", 1, "25c81989df183df01b3e8a0aad5dffbe", 29515, "fashion-mnist/train-labels-idx1-ubyte.gz"},
		{"fashion-mnist", 2, "bef4ecab320f06d8554ea6380940ec79", 4422102, "fashion-mnist/t10k-images-idx3-ubyte.gz"},
		{"fashion-mnist", 3, "bb300cfdad3c16e7a12a480ee83cd310", 5148, "fashion-mnist/t10k-labels-idx1-ubyte.gz"},
	}
	for _, p := range published {
		r, err := RemoteByName(p.name)
		if err != nil {
			t.Fatal(err)
		}
		if f := r.Files[p.file]; f.MD5 != p.md5 || f.Size != p.size || f.Dest != p.dest {
			t.Fatalf("%s entry %+v", p.name, f)
		}
	}
}
