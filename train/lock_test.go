package train

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLockOut(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockOut(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("in use by process %d", os.Getpid())
	if _, err := lockOut(dir); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("second lock: err = %v, want %q", err, want)
	}
	// The refused attempt must not have removed the holder's lock.
	if _, err := lockOut(dir); err == nil {
		t.Error("a refused attempt released the holder's lock")
	}
	unlock()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err == nil {
		t.Error("the lock file outlived its release")
	}
	// An output folder that cannot be created is refused up front.
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	var ce *ConfigError
	if _, err := lockOut(filepath.Join(file, "sub")); !errors.As(err, &ce) || ce.Flag != "out" {
		t.Errorf("unwritable --out: err = %v, want a ConfigError for --out", err)
	}
}

// TestLockLeftoversDoNotBlock: a lock file left by a dead process blocks
// nothing, whatever pid it names: our own (a container's pid 1 after an
// out-of-memory kill), a live process's, or none.
func TestLockLeftoversDoNotBlock(t *testing.T) {
	for _, content := range []string{fmt.Sprintf("%d\n", os.Getpid()), "1\n", "", "garbage"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, LockFile), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		unlock, err := lockOut(dir)
		if err != nil {
			t.Errorf("lock file holding %q: %v", content, err)
			continue
		}
		unlock()
	}
}

// TestLockRace: of many simultaneous takers exactly one gets the lock, and
// it is released for the next round only by its holder.
func TestLockRace(t *testing.T) {
	dir := t.TempDir()
	for round := range 20 {
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			unlocks []func()
		)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if u, err := lockOut(dir); err == nil {
					mu.Lock()
					unlocks = append(unlocks, u)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(unlocks) != 1 {
			t.Fatalf("round %d: %d takers hold the lock at once, want 1", round, len(unlocks))
		}
		unlocks[0]()
	}
}

// TestLockReleasedByKill: a process that holds the lock and is killed with
// SIGKILL leaves its lock file behind, and the next run takes it.
func TestLockReleasedByKill(t *testing.T) {
	if dir := os.Getenv("GTSTORM_TEST_LOCK_HOLDER"); dir != "" {
		if _, err := lockOut(dir); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println("locked")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLockReleasedByKill$")
	cmd.Env = append(os.Environ(), "GTSTORM_TEST_LOCK_HOLDER="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	buf := make([]byte, 64)
	n, _ := stdout.Read(buf)
	if !strings.Contains(string(buf[:n]), "locked") {
		t.Fatalf("helper process: %q", buf[:n])
	}
	if _, err := lockOut(dir); err == nil || !strings.Contains(err.Error(), fmt.Sprint(cmd.Process.Pid)) {
		t.Fatalf("lock held by process %d: err = %v, want a refusal naming it", cmd.Process.Pid, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Fatalf("the killed holder's lock file is gone (%v); the test proves nothing", err)
	}
	unlock, err := lockOut(dir)
	if err != nil {
		t.Fatalf("lock of a killed process: %v", err)
	}
	unlock()
}

// TestLockClearsTemps: taking a folder's lock removes the temporary files a
// killed writer left there, and nothing else.
func TestLockClearsTemps(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{".curve.png.tmp123", ".metrics.csv.tmp9", "keep.txt"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	unlock, err := lockOut(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if got := strings.Join(names, " "); got != ".lock keep.txt" {
		t.Errorf("folder holds %q, want %q", got, ".lock keep.txt")
	}
}
