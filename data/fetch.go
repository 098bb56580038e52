package data

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// maxUnpacked bounds any single file written while unpacking (4 GiB), so a
// hostile archive cannot fill the disk.
const maxUnpacked = 1 << 32

// FetchOptions tunes Fetch and FetchRemote.
type FetchOptions struct {
	// BaseURL, if set, replaces the publisher: each file is fetched from
	// BaseURL + "/" + the last element of its published URL (a mirror, or a
	// test server). It must be an http or https URL.
	BaseURL string
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Progress receives status and progress; nil discards them.
	Progress io.Writer
	// Bar draws a progress bar on Progress (for a terminal) instead of
	// printing a plain line every tenth of a download.
	Bar bool
	// Force downloads again a dataset that is already present and replaces it.
	Force bool
}

// Fetch downloads the dataset called name (see Remotes) into the data folder
// dir (DefaultDataDir if ""), verifies it and moves it into place; see
// FetchRemote.
func Fetch(ctx context.Context, name, dir string, opt FetchOptions) error {
	r, err := RemoteByName(name)
	if err != nil {
		return err
	}
	return FetchRemote(ctx, r, dir, opt)
}

// FetchRemote downloads r's files into a temporary folder inside dir,
// verifies each (size and MD5 where published, then the unpacked content
// parsed in full against the published sample and feature counts), and only
// then renames the results into place, the training file last, so that an
// interrupted or corrupt download never leaves a dataset that loads. A copy
// already in dir is moved aside first and removed only once every file of
// the new copy is in place; if any step of the installation fails, the new
// files are taken out again and the old ones put back, so dir holds the old
// copy or the new one, never a mix. A dataset already present is left alone
// unless opt.Force.
func FetchRemote(ctx context.Context, r Remote, dir string, opt FetchOptions) error {
	return fetchRemote(ctx, r, dir, opt, os.Rename)
}

// fetchRemote is FetchRemote with the rename it installs files with, which
// tests replace to make the installation fail part way.
func fetchRemote(ctx context.Context, r Remote, dir string, opt FetchOptions, rename func(oldpath, newpath string) error) (err error) {
	if dir == "" {
		if dir, err = DefaultDataDir(); err != nil {
			return err
		}
	}
	logw := opt.Progress
	if logw == nil {
		logw = io.Discard
	}
	if err := checkRemote(r, opt.BaseURL); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("fetch %s: data folder: %w", r.Name, err)
	}
	if !opt.Force && present(dir, r) {
		fmt.Fprintf(logw, "%s: already present in %s; not downloaded again\n", r.Name, dir)
		return nil
	}
	if r.Note != "" {
		fmt.Fprintf(logw, "%s: %s\n", r.Name, r.Note)
	}
	tmp, err := os.MkdirTemp(dir, ".fetch-"+r.Name+"-")
	if err != nil {
		return fmt.Errorf("fetch %s: %w", r.Name, err)
	}
	keep := false // the temporary folder holds the only old copy: leave it
	defer func() {
		if !keep {
			os.RemoveAll(tmp)
		}
	}()

	staged, err := stageFiles(ctx, r, tmp, opt, logw)
	if err != nil {
		return err
	}
	if ctx.Err() != nil { // interrupted after the last download: install nothing
		return fmt.Errorf("fetch %s: %w", r.Name, context.Cause(ctx))
	}
	dests := make([]string, len(r.Files))
	for i, f := range r.Files {
		dests[i] = filepath.Join(dir, f.Dest)
	}
	if err := install(tmp, staged, dests, rename); err != nil {
		var le *lostError
		keep = errors.As(err, &le)
		return fmt.Errorf("fetch %s: %w", r.Name, err)
	}
	syncDir(dir)
	fmt.Fprintf(logw, "%s: ready: %s\n", r.Name, strings.Join(dests, ", "))
	return nil
}

// checkRemote refuses a remote dataset of a format fetch cannot unpack,
// and a base URL (FetchOptions.BaseURL) that is not an http or https
// address.
func checkRemote(r Remote, baseURL string) error {
	if _, err := unpacker(r); err != nil {
		return fmt.Errorf("fetch %s: %w", r.Name, err)
	}
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("fetch %s: base URL %q: want an http:// or https:// address", r.Name, baseURL)
		}
	}
	return nil
}

// stageFiles downloads each of r's files into the temporary folder tmp,
// reporting progress to logw, and unpacks it there into the form r's
// format installs; it returns the unpacked files' paths, in the order of
// r.Files.
func stageFiles(ctx context.Context, r Remote, tmp string, opt FetchOptions, logw io.Writer) ([]string, error) {
	client := opt.Client
	if client == nil {
		client = http.DefaultClient
	}
	unpack, err := unpacker(r)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", r.Name, err)
	}
	staged := make([]string, len(r.Files))
	for i, f := range r.Files {
		src := f.URL
		if opt.BaseURL != "" {
			src = strings.TrimRight(opt.BaseURL, "/") + "/" + path.Base(f.URL)
		}
		dl := filepath.Join(tmp, "download-"+strconv.Itoa(i))
		label := path.Base(f.URL)
		if err := download(ctx, client, src, dl, f, label, logw, opt.Bar); err != nil {
			return nil, fmt.Errorf("fetch %s: %s: %w", r.Name, src, err)
		}
		staged[i] = filepath.Join(tmp, "staged-"+strconv.Itoa(i))
		if err := unpack(dl, staged[i], f); err != nil {
			return nil, fmt.Errorf("fetch %s: %s: %w", r.Name, src, err)
		}
		os.Remove(dl)
	}
	return staged, nil
}

// lostError reports an installation that failed and could not put the old
// copy back: the old files lie in the temporary folder, which must be kept.
type lostError struct {
	err, undo error
	tmp       string
}

func (e *lostError) Error() string {
	return fmt.Sprintf("%v; restoring the previous copy failed too (%v): its files are kept in %s", e.err, e.undo, e.tmp)
}

func (e *lostError) Unwrap() error { return e.err }

// install moves the verified files staged[i] to dests[i], the last first and
// the first (the training file) last. A destination that exists is first
// moved aside into tmp, and its old copy is only dropped (with tmp, by the
// caller) after every file is in place. If a rename fails, the renames done
// so far are undone in reverse order, the training file first, so that the
// destinations hold the old copy again (or nothing, where there was none).
// If undoing fails too, the error is a *lostError naming tmp, which then
// holds the old files.
func install(tmp string, staged, dests []string, rename func(oldpath, newpath string) error) error {
	type move struct{ from, to string }
	var done []move
	undo := func(err error) error {
		var errs []error
		for k := len(done) - 1; k >= 0; k-- {
			if e := rename(done[k].to, done[k].from); e != nil {
				errs = append(errs, e)
			}
		}
		if len(errs) > 0 {
			return &lostError{err: err, undo: errors.Join(errs...), tmp: tmp}
		}
		return err
	}
	for i := len(dests) - 1; i >= 0; i-- {
		if err := os.MkdirAll(filepath.Dir(dests[i]), 0o755); err != nil {
			return undo(err)
		}
		if _, err := os.Lstat(dests[i]); err == nil {
			old := filepath.Join(tmp, "old-"+strconv.Itoa(i))
			if err := rename(dests[i], old); err != nil {
				return undo(fmt.Errorf("moving the old %s aside: %w", dests[i], err))
			}
			done = append(done, move{dests[i], old})
		}
		if err := rename(staged[i], dests[i]); err != nil {
			return undo(fmt.Errorf("moving the new %s into place: %w", dests[i], err))
		}
		done = append(done, move{staged[i], dests[i]})
	}
	return nil
}

// present reports whether all of r's files are in dir.
func present(dir string, r Remote) bool {
	for _, f := range r.Files {
		if _, err := os.Stat(filepath.Join(dir, f.Dest)); err != nil {
			return false
		}
	}
	return true
}

// download fetches src into the new file dst, checking its size and MD5
// against f while it streams.
func download(ctx context.Context, client *http.Client, src, dst string, f RemoteFile, label string, logw io.Writer, bar bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("server answered %s", resp.Status)
	}
	if f.Size > 0 && resp.ContentLength >= 0 && resp.ContentLength != f.Size {
		return fmt.Errorf("server announces %d bytes, the published size is %d", resp.ContentLength, f.Size)
	}
	total := f.Size
	if total == 0 {
		total = resp.ContentLength
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	sum := md5.New()
	prog := newProgress(logw, label, total, bar)
	body := io.Reader(resp.Body)
	if f.Size > 0 {
		body = io.LimitReader(body, f.Size+1)
	} else {
		body = io.LimitReader(body, maxUnpacked+1)
	}
	n, err := io.Copy(io.MultiWriter(out, sum, prog), body)
	prog.finish(err == nil)
	switch {
	case err != nil:
		return fmt.Errorf("download interrupted after %d bytes: %w", n, err)
	case f.Size > 0 && n != f.Size:
		return fmt.Errorf("downloaded %d bytes, the published size is %d", n, f.Size)
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		return fmt.Errorf("downloaded %d of the %d bytes the server announced", n, resp.ContentLength)
	case n > maxUnpacked:
		return fmt.Errorf("more than %d bytes", int64(maxUnpacked))
	}
	if f.MD5 != "" {
		if got := hex.EncodeToString(sum.Sum(nil)); got != strings.ToLower(f.MD5) {
			return fmt.Errorf("MD5 %s, the published MD5 is %s: corrupt or not the official file", got, f.MD5)
		}
	}
	return out.Close()
}

// syncDir flushes a folder's entries to disk where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
