package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gtstorm/gtstorm/decentral/graph"

	"github.com/gtstorm/gtstorm/decentral/cluster"
	"github.com/gtstorm/gtstorm/decentral/cluster/certs"
	"github.com/gtstorm/gtstorm/internal/atomicfile"
	"github.com/gtstorm/gtstorm/train"
)

// maxLaunchRanks bounds the rank processes launch starts on one machine
// (each with its own copy of the data, a port and, by default, a
// certificate pair), checked before anything is written.
const maxLaunchRanks = 256

// runLaunch runs a run as K `gtstorm rank` processes on loopback.
func runLaunch(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("launch", "launch --ranks K [--insecure] [run flags]\n\n"+
		"Starts K rank processes (`gtstorm rank`) on loopback ports, each hosting a block of\n"+
		"the nodes, with certificates made for the run (in --out/certs) unless --insecure,\n"+
		"waits for them, and leaves the run folder exactly as `gtstorm train` writes it\n"+
		"(the other ranks' checkpoints in --out/ranks/rank-R). Its lines are the ranks',\n"+
		"each prefixed with its rank. Ctrl-C stops every rank after the round it is in,\n"+
		"each writing a checkpoint; --resume with the same --out continues the run.", stdout)
	cfg := train.Default()
	cfg.Flags(fs)
	k := fs.Int("ranks", 2, "number of rank processes K, at most --nodes")
	out := fs.String("out", "", "output folder (default runs/<timestamp>-<algo>-<dataset>)")
	force := fs.Bool("force", false, "replace a previous run's outputs in --out")
	insecure := fs.Bool("insecure", false, "plaintext between the ranks instead of mutual TLS")
	peerTimeout := fs.Duration("peer-timeout", 60*time.Second, "how long a silent rank is waited for")
	resume := fs.Bool("resume", false, "restart the ranks of the run in --out from the latest round all of them checkpointed (with --iters T: to T rounds in all, as resume --iters)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *resume {
		return resumeLaunch(fs, *out, *peerTimeout, stdout, stderr)
	}
	if err := cfg.Validate(); err != nil {
		return runError(err)
	}
	if err := checkDataDirs(cfg); err != nil {
		return err
	}
	switch {
	case *k < 1 || *k > cfg.Nodes:
		return usagef("--ranks %d: want 1 to --nodes (%d) ranks", *k, cfg.Nodes)
	case *k > maxLaunchRanks:
		return usagef("--ranks %d: want at most %d rank processes on this machine (spread more over hosts with gtstorm rank)", *k, maxLaunchRanks)
	case cfg.Nodes > graph.MaxNodes:
		return usagef("--nodes %d: want at most %d, the largest graph whose mixing matrix is supported", cfg.Nodes, graph.MaxNodes)
	case *peerTimeout <= 0:
		return usagef("--peer-timeout %v: want a positive duration", *peerTimeout)
	case cfg.SimulatesNetwork():
		return errSimulatedOverRanks("launch")
	}
	// The ranks get contiguous blocks of nodes, as rank's ranks file says.
	blocks, err := (&cluster.Ranks{Name: "launch", Addrs: make([]string, *k)}).Assign(cfg.Nodes)
	if err != nil {
		return runError(err)
	}
	if err := cfg.CheckPlacement(blocks); err != nil {
		return runError(err)
	}
	if *out == "" {
		*out = cfg.DefaultOut(time.Now())
	}
	base, err := launchFiles(*out, *k, !*insecure)
	if err != nil {
		return err
	}
	// Every rank gets the run flags this command was given.
	var pass []string
	settings := map[string]bool{}
	for _, s := range train.Settings() {
		settings[s.Name] = true
	}
	fs.Visit(func(f *flag.Flag) {
		if settings[f.Name] {
			pass = append(pass, "--"+f.Name+"="+f.Value.String())
		}
	})
	if !isSet(fs, "workers") {
		// K processes share this machine's cores; results do not depend on
		// the workers.
		pass = append(pass, "--workers="+strconv.Itoa(max(1, runtime.NumCPU() / *k)))
	}
	pass = append(pass, "--peer-timeout="+peerTimeout.String(), "--ranks="+filepath.Join(*out, train.RanksFileName), "--launched-run="+*out)
	if *insecure {
		pass = append(pass, "--insecure")
	} else {
		pass = append(pass, "--certs="+filepath.Join(*out, train.CertsDir))
	}
	if *force {
		pass = append(pass, "--force")
	}
	return supervise(*k, *out, base, pass, *peerTimeout, stdout, stderr)
}

// resumeLaunch restarts the K ranks of the launched run in out from the
// latest round every rank keeps a checkpoint of, on fresh loopback ports.
func resumeLaunch(fs *flag.FlagSet, out string, timeout time.Duration, stdout, stderr io.Writer) error {
	if out == "" {
		return usagef("--resume: want --out, the folder of the run to resume")
	}
	if name, ok := givenSetting(fs, "iters"); ok {
		return usagef("--%s: a resumed run keeps its settings; give none but --iters", name)
	}
	iters := 0
	if isSet(fs, "iters") {
		n, err := strconv.Atoi(fs.Lookup("iters").Value.String())
		if err != nil || n < 1 {
			return usagef("--iters %s: want the round count to resume to (at least the rounds done)", fs.Lookup("iters").Value)
		}
		iters = n
	}
	rk, err := cluster.ReadRanksFile(filepath.Join(out, train.RanksFileName))
	if err != nil {
		return fmt.Errorf("resume %s: %w", out, err)
	}
	k := len(rk.Addrs)
	if isSet(fs, "ranks") && fs.Lookup("ranks").Value.String() != strconv.Itoa(k) {
		// A resumed run keeps its ranks: another count would be ignored.
		return usagef("--ranks %s: the run in %s was launched on %d ranks and resumes on them; give no --ranks, or %d", fs.Lookup("ranks").Value, out, k, k)
	}
	if p, err := train.RunPlacement(out); err != nil {
		return fmt.Errorf("resume %s: %w", out, err)
	} else if p != nil && p.Ranks != k {
		return fmt.Errorf("resume %s: %s lists %d ranks, but the run's checkpoints were written by %d ranks: restore its ranks file (one host:port per rank)", out, rk.Name, k, p.Ranks)
	}
	dirs := make([]string, k)
	for r := range dirs {
		dirs[r] = train.RankDir(out, r)
	}
	t, err := train.CommonRound(dirs)
	if err != nil {
		return fmt.Errorf("resume %s: %w", out, err)
	}
	// Refuse before starting the ranks what each of them would refuse on
	// its own, which launch could only report as the failure of whichever
	// rank exits first: input files that changed since the run started,
	// and (with --iters) fewer rounds than done, or another count for a
	// cosine or step schedule (see resume --iters).
	ck, err := train.ReadRankCheckpoint(dirs[0], t)
	if err != nil {
		return fmt.Errorf("resume %s: %w", out, err)
	}
	if err := ck.CheckUnchanged(); err != nil {
		return fmt.Errorf("resume %s: %w", out, err)
	}
	if iters != 0 {
		if _, err := train.ResumeIters(ck.Config, t, iters); err != nil {
			return runError(err)
		}
		fmt.Fprintf(stderr, "resuming %d ranks from round %d to round %d\n", k, t, iters)
	} else {
		fmt.Fprintf(stderr, "resuming %d ranks from round %d\n", k, t)
	}
	_, statErr := os.Stat(filepath.Join(out, train.CertsDir, certs.CAFile))
	secure := statErr == nil
	base, err := launchFiles(out, k, false)
	if err != nil {
		return err
	}
	pass := []string{"--peer-timeout=" + timeout.String(), "--ranks=" + filepath.Join(out, train.RanksFileName), "--resume-round=" + strconv.Itoa(t), "--launched-run=" + out}
	if iters != 0 {
		pass = append(pass, "--iters="+strconv.Itoa(iters))
	}
	if secure {
		pass = append(pass, "--certs="+filepath.Join(out, train.CertsDir))
	} else {
		pass = append(pass, "--insecure")
	}
	return supervise(k, out, base, pass, timeout, stdout, stderr)
}

// launchFiles picks K free loopback ports and writes the ranks file and,
// with newCerts, the run's certificates into out; it returns the command
// that starts a rank.
func launchFiles(out string, k int, newCerts bool) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("the gtstorm executable: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	rk, err := cluster.Loopback(k)
	if err != nil {
		return "", err
	}
	// Ports the kernel hands out now; a process that takes one before the
	// rank binds it makes that rank fail to listen, naming the address.
	for r := range rk.Addrs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("a loopback port for rank %d: %w", r, err)
		}
		defer ln.Close()
		rk.Addrs[r] = ln.Addr().String()
	}
	if err := atomicfile.WriteBytes(filepath.Join(out, train.RanksFileName), rk.Marshal()); err != nil {
		return "", err
	}
	if newCerts {
		if err := certs.GenerateWith(filepath.Join(out, train.CertsDir), k, certs.Options{Overwrite: true}); err != nil {
			return "", err
		}
	}
	return exe, nil
}

// supervise starts the K ranks, forwards signals to them, prefixes their
// lines with their rank, and waits. When a rank fails, the others are
// asked to stop (they checkpoint) unless a signal asked them already, and
// killed if they do not within the peer timeout. After a signal (Ctrl-C)
// it returns an error naming the round the ranks resume from and the
// command that does it.
func supervise(k int, out, exe string, pass []string, timeout time.Duration, stdout, stderr io.Writer) error {
	s := &supervisor{procs: make([]*exec.Cmd, k), exited: make([]bool, k), fate: newRankFates(k), errLog: &lineWriter{w: stderr}}
	defer s.cutLifelines()
	for r := range k {
		args := append([]string{"rank", "--rank=" + strconv.Itoa(r), "--out=" + train.RankDir(out, r)}, pass...)
		if err := s.start(r, exe, args, stdout); err != nil {
			return err
		}
	}
	defer s.forwardSignals()()
	first := s.wait(timeout)
	s.lines.Wait()
	s.mu.Lock()
	stopped := s.interrupted
	s.mu.Unlock()
	if stopped && first != nil {
		return interruptedLaunch(out, k)
	}
	var exit *exec.ExitError
	if errors.As(first, &exit) && exit.ExitCode() == 2 {
		return usageError{first}
	}
	if first == nil {
		return nil
	}
	return s.fate.failure(out, first)
}

// supervisor holds launch's rank processes.
type supervisor struct {
	mu          sync.Mutex
	procs       []*exec.Cmd
	exited      []bool // guarded by mu: Wait owns ProcessState
	asked       bool   // guarded by mu: the ranks were asked to stop
	interrupted bool   // guarded by mu: by a signal
	lines       sync.WaitGroup
	fate        *rankFates
	errLog      *lineWriter
	// lifelines are the writing ends of the ranks' stdin pipes, which only
	// this process holds: when it dies, however, they close and the ranks
	// stop (see followLauncher); on Linux the kernel also sends SIGTERM.
	lifelines []*os.File
}

// start starts rank r as exe args, its stdout (rank 0's) to stdout and its
// stderr, line by line with the rank's prefix, to the supervisor's log.
func (s *supervisor) start(r int, exe string, args []string, stdout io.Writer) error {
	cmd := exec.Command(exe, args...)
	cmd.Env = os.Environ()
	if r == 0 {
		cmd.Stdout = stdout
	}
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	life, lifeline, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("rank %d's pipe: %w", r, err)
	}
	s.lifelines = append(s.lifelines, lifeline)
	cmd.Stdin = life
	tieToLauncher(cmd)
	err = cmd.Start()
	life.Close()
	if err != nil {
		return fmt.Errorf("start rank %d: %w", r, err)
	}
	s.procs[r] = cmd
	s.lines.Add(1)
	go func() {
		defer s.lines.Done()
		sc := bufio.NewScanner(pipe)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			s.fate.read(r, sc.Text())
			s.errLog.line(fmt.Sprintf("[rank %d] %s", r, sc.Text()))
		}
	}()
	return nil
}

// cutLifelines closes the ranks' stdin pipes.
func (s *supervisor) cutLifelines() {
	for _, w := range s.lifelines {
		w.Close()
	}
}

// stopAll sends sig to every rank still running.
func (s *supervisor) stopAll(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for r, p := range s.procs {
		if !s.exited[r] {
			p.Process.Signal(sig)
		}
	}
}

// forwardSignals passes SIGINT and SIGTERM on to the ranks (a second one
// too: the ranks then stop at once) until the returned function is called.
func (s *supervisor) forwardSignals() (stop func()) {
	signals := make(chan os.Signal, 2)
	signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
	go func() {
		for sig := range signals {
			s.mu.Lock()
			s.asked, s.interrupted = true, true
			s.mu.Unlock()
			s.stopAll(sig)
		}
	}()
	return func() { signal.Stop(signals) }
}

// wait waits for every rank and returns the first failure. When a rank
// fails, the others are asked to stop with SIGTERM (so they checkpoint)
// unless a signal asked them already, and killed if they have not stopped
// within timeout plus 10 s.
func (s *supervisor) wait(timeout time.Duration) error {
	type result struct {
		rank int
		err  error
	}
	done := make(chan result, len(s.procs))
	for r, p := range s.procs {
		go func() { done <- result{r, p.Wait()} }()
	}
	var first error
	var killer *time.Timer
	for range s.procs {
		res := <-done
		s.mu.Lock()
		s.exited[res.rank] = true
		s.mu.Unlock()
		s.fate.exited(res.rank, res.err)
		if res.err == nil || first != nil {
			continue
		}
		first = fmt.Errorf("rank %d failed: %w (its lines above say why)", res.rank, res.err)
		s.mu.Lock()
		again := s.asked
		s.asked = true
		s.mu.Unlock()
		if !again {
			// A rank stopped by a signal writes its checkpoint; a second
			// signal would stop it at once, without one.
			s.stopAll(syscall.SIGTERM)
		}
		killer = time.AfterFunc(timeout+10*time.Second, func() {
			s.fate.killing()
			s.stopAll(syscall.SIGKILL)
		})
	}
	if killer != nil {
		killer.Stop()
	}
	return first
}

// interruptedLaunch is the error of a launched run stopped by a signal: it
// names the round every rank keeps a checkpoint of and the command that
// continues the run from there.
func interruptedLaunch(out string, k int) error {
	dirs := make([]string, k)
	for r := range dirs {
		dirs[r] = train.RankDir(out, r)
	}
	t, err := train.CommonRound(dirs)
	if err != nil {
		return fmt.Errorf("interrupted: %w (with the same flags, --out %s and --force)", err, out)
	}
	return fmt.Errorf("interrupted; every rank keeps a checkpoint of round %d (continue with: gtstorm launch --resume --out %s)", t, out)
}

// lineWriter writes whole lines to w from several goroutines.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintln(l.w, s)
}
