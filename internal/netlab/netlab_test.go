package netlab

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperEnv makes the test binary a small TCP tool (see helper) instead of
// the tests, for running inside a lab's namespaces.
const helperEnv = "NETLAB_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		if err := helper(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper runs one of:
//
//	serve ADDR    accept connections; read each to its end, answer the count
//	send ADDR N   send N bytes, print the answer and the seconds it took
//	hold ADDR     connect, print "connected", and wait for the connection to end
func helper(args []string) error {
	if len(args) < 2 {
		return fmt.Errorf("helper: want a mode and an address, got %q", args)
	}
	switch args[0] {
	case "serve":
		ln, err := net.Listen("tcp", args[1])
		if err != nil {
			return err
		}
		fmt.Println("listening")
		for {
			c, err := ln.Accept()
			if err != nil {
				return err
			}
			go func() {
				defer c.Close()
				n, _ := io.Copy(io.Discard, c)
				fmt.Fprintln(c, n)
			}()
		}
	case "send":
		n, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		c, err := net.DialTimeout("tcp", args[1], time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		start := time.Now()
		if _, err := c.Write(make([]byte, n)); err != nil {
			return err
		}
		c.(*net.TCPConn).CloseWrite()
		got, err := io.ReadAll(c)
		if err != nil {
			return err
		}
		fmt.Printf("%s %.3f\n", strings.TrimSpace(string(got)), time.Since(start).Seconds())
		return nil
	case "hold":
		c, err := net.DialTimeout("tcp", args[1], time.Second)
		if err != nil {
			return err
		}
		fmt.Println("connected")
		_, err = c.Read(make([]byte, 1))
		return fmt.Errorf("connection ended: %v", err)
	}
	return fmt.Errorf("helper: unknown mode %q", args[0])
}

// newLab returns a lab of k ranks, removed when the test ends, or skips the
// test saying why none can be made here.
func newLab(t *testing.T, k int) *Lab {
	t.Helper()
	if err := Available(); err != nil {
		t.Skip(err)
	}
	l, err := New(k)
	if err != nil {
		t.Skipf("cannot make network namespaces here: %v", err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// start starts the helper in rank r's namespace and returns it with its
// first line of output.
func start(t *testing.T, ctx context.Context, l *Lab, r int, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := l.Command(ctx, r, os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	return cmd, strings.TrimSpace(line)
}

// send sends n bytes from rank 0 to rank 1's server and returns the
// seconds it took, or an error.
func send(ctx context.Context, l *Lab, n int) (float64, error) {
	cmd := l.Command(ctx, 0, os.Args[0], "send", l.Addr(1)+":9000", strconv.Itoa(n))
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	var got int
	var secs float64
	if _, err := fmt.Sscan(string(out), &got, &secs); err != nil || got != n {
		return 0, fmt.Errorf("sent %d bytes, answer %q", n, out)
	}
	return secs, nil
}

// TestLab: ranks reach each other through the bridge; a link down cuts a
// rank off and up restores it; ss -K ends a rank's connections; tbf paces
// a rank's traffic to its rate.
func TestLab(t *testing.T) {
	l := newLab(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, line := start(t, ctx, l, 1, "serve", l.Addr(1)+":9000"); line != "listening" {
		t.Fatalf("server in rank 1's namespace: %q", line)
	}
	if _, err := send(ctx, l, 1000); err != nil {
		t.Fatalf("rank 0 to rank 1: %v", err)
	}
	if err := l.SetLink(1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := send(ctx, l, 1000); err == nil {
		t.Error("rank 0 reached rank 1 with rank 1's link down")
	}
	if err := l.SetLink(1, true); err != nil {
		t.Fatal(err)
	}
	if _, err := send(ctx, l, 1000); err != nil {
		t.Fatalf("rank 0 to rank 1 after the link came back: %v", err)
	}

	hold, line := start(t, ctx, l, 0, "hold", l.Addr(1)+":9000")
	if line != "connected" {
		t.Fatalf("hold: %q", line)
	}
	if err := l.KillSockets(0, 1); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- hold.Wait() }()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Error("a connection outlived ss -K by 5 s")
	}

	const n, rate = 1 << 20, 10e6 // 1 MiB at 10 Mbit/s: 0.84 s
	if err := l.Pace(0, "10mbit", "16kb"); err != nil {
		t.Fatal(err)
	}
	secs, err := send(ctx, l, n)
	if err != nil {
		t.Fatal(err)
	}
	want := n * 8 / rate
	t.Logf("1 MiB at 10 Mbit/s: %.3f s (%.3f s at the rate)", secs, want)
	if secs < 0.8*want || secs > 2*want {
		t.Errorf("1 MiB paced at 10 Mbit/s took %.3f s, want about %.3f s", secs, want)
	}
	if err := l.Unpace(0); err != nil {
		t.Fatal(err)
	}
}
