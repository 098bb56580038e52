package data

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// failingRename is os.Rename that fails on its calls numbered from fail on
// (1-based; 0 never), or only on call fail when once is set.
type failingRename struct {
	fail  int
	once  bool
	calls int
}

func (f *failingRename) rename(oldpath, newpath string) error {
	f.calls++
	if f.fail > 0 && (f.calls == f.fail || (!f.once && f.calls > f.fail)) {
		return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: errors.New("injected failure")}
	}
	return os.Rename(oldpath, newpath)
}

// TestFetchInstallFailureKeepsOldCopy makes each rename of the installation
// fail in turn: the data folder must then hold exactly the old copy (or
// nothing, where there was none), never the new test file beside the old
// training file, and no temporary folder.
func TestFetchInstallFailureKeepsOldCopy(t *testing.T) {
	newTrain := []byte("1 1:1\n-1 2:1\n")
	newTest := []byte("-1 1:1\n1 2:1 3:1\n")
	_, srv := newFileServer(t, map[string][]byte{"a9a": newTrain, "a9a.t": newTest})
	r, _ := RemoteByName("a9a")
	r.Files[0].Rows, r.Files[0].Features = 2, 3
	r.Files[1].Rows, r.Files[1].Features = 2, 3
	opt := FetchOptions{BaseURL: srv.URL, Client: srv.Client(), Force: true}
	old := map[string]string{"a9a": "1 5:1\n", "a9a.t": "-1 6:1\n"}

	// With an old copy there are four renames: a9a.t aside, the new a9a.t
	// in, a9a aside, the new a9a in.
	for _, c := range []struct {
		name     string
		withOld  bool
		fail     int
		wantErr  string
		wantNew  bool // the install succeeds
		wantKept bool // undoing failed: the old copy is kept in the temporary folder
	}{
		{"old copy, no failure", true, 0, "", true, false},
		{"old copy, moving the old test file aside fails", true, 1, "moving the old", false, false},
		{"old copy, moving the new test file in fails", true, 2, "moving the new", false, false},
		{"old copy, moving the old training file aside fails", true, 3, "moving the old", false, false},
		{"old copy, moving the new training file in fails", true, 4, "moving the new", false, false},
		{"no old copy, moving the new test file in fails", false, 1, "moving the new", false, false},
		{"no old copy, moving the new training file in fails", false, 2, "moving the new", false, false},
		{"old copy, undoing fails too", true, 4, "kept in", false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.withOld {
				for name, body := range old {
					writeFile(t, dir, name, []byte(body))
				}
			}
			fr := &failingRename{fail: c.fail, once: !c.wantKept}
			err := fetchRemote(context.Background(), r, dir, opt, fr.rename)
			if c.wantNew {
				if err != nil {
					t.Fatal(err)
				}
				for name, want := range map[string][]byte{"a9a": newTrain, "a9a.t": newTest} {
					if got, _ := os.ReadFile(filepath.Join(dir, name)); string(got) != string(want) {
						t.Errorf("%s holds %q after the install, want the new %q", name, got, want)
					}
				}
				if l := leftovers(t, dir, "a9a", "a9a.t"); len(l) != 0 {
					t.Errorf("the install left %v", l)
				}
				return
			}
			wantErr(t, err, "fetch a9a", c.wantErr, "injected failure")
			if c.wantKept {
				l := leftovers(t, dir, "a9a", "a9a.t")
				if len(l) != 1 || !strings.HasPrefix(l[0], ".fetch-a9a-") || !strings.Contains(err.Error(), filepath.Join(dir, l[0])) {
					t.Fatalf("left %v, error %q; want the temporary folder kept and named", l, err)
				}
				for i, name := range []string{"a9a", "a9a.t"} {
					p := filepath.Join(dir, l[0], "old-"+string(rune('0'+i)))
					if got, _ := os.ReadFile(p); string(got) != old[name] {
						t.Errorf("kept %s holds %q, want the old %s %q", p, got, name, old[name])
					}
				}
				return
			}
			if l := leftovers(t, dir, "a9a", "a9a.t"); len(l) != 0 {
				t.Errorf("a failed install left %v", l)
			}
			for name, body := range old {
				got, err := os.ReadFile(filepath.Join(dir, name))
				switch {
				case !c.withOld && !errors.Is(err, os.ErrNotExist):
					t.Errorf("%s exists after a failed first install (%q, %v)", name, got, err)
				case c.withOld && string(got) != body:
					t.Errorf("%s holds %q after a failed install (%v), want the old copy %q", name, got, err, body)
				}
			}
		})
	}
}
