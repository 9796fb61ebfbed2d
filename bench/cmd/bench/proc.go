package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// usage is what one finished process cost.
type usage struct {
	Wall     time.Duration
	CPU      time.Duration // user + system, from the kernel's rusage of the child
	MaxRSSKB int64         // peak resident set size, KiB
	TimedOut bool          // stopped by the time cap
	Err      error
	// Samples are the process's CPU time read from /proc every 250 ms.
	Samples []cpuSample
}

type cpuSample struct {
	At  time.Time
	CPU time.Duration
}

// CPUAt is the CPU time of the last sample taken at or before t (the
// whole run's CPU when t is after the end).
func (u usage) CPUAt(t time.Time) time.Duration {
	var c time.Duration
	for _, s := range u.Samples {
		if s.At.After(t) {
			return c
		}
		c = s.CPU
	}
	return u.CPU
}

// runMeasured runs cmd to completion (or until cap, then SIGTERM, then
// SIGKILL 15 s later) and returns its rusage. stdout and stderr go to
// logPath.
func runMeasured(ctx context.Context, cmd *exec.Cmd, cap time.Duration, logPath string) usage {
	lf, err := os.Create(logPath)
	if err != nil {
		return usage{Err: err}
	}
	defer lf.Close()
	fmt.Fprintf(lf, "$ %s\n", shellJoin(cmd.Args))
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return usage{Err: err}
	}
	done := make(chan error, 1)
	var u usage
	sampled := make(chan []cpuSample, 1)
	stopSampling := make(chan struct{})
	go func() {
		var ss []cpuSample
		pid := cmd.Process.Pid
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopSampling:
				sampled <- ss
				return
			case now := <-t.C:
				if c, err := procCPU(pid); err == nil {
					ss = append(ss, cpuSample{now, c})
				}
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		close(stopSampling)
		done <- err
	}()
	timer := time.NewTimer(cap)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		u.TimedOut = true
		err = stopProcess(cmd, done)
	case <-ctx.Done():
		err = stopProcess(cmd, done)
		u.Err = ctx.Err()
	}
	u.Wall = time.Since(start)
	u.Samples = <-sampled
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		u.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		u.MaxRSSKB = ru.Maxrss
	}
	if err != nil && !u.TimedOut && u.Err == nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 0 {
			u.Err = err
		}
	}
	return u
}

// stopProcess terminates the process group (SIGTERM: a shell started in the
// background ignores SIGINT), then kills it.
func stopProcess(cmd *exec.Cmd, done <-chan error) error {
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case err := <-done:
		return err
	case <-time.After(15 * time.Second):
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	return <-done
}

// procStatus reads VmRSS and VmHWM (KiB) of a live process.
func procStatus(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		for _, k := range []struct {
			p string
			v *int64
		}{{"VmRSS:", &rss}, {"VmHWM:", &hwm}} {
			if strings.HasPrefix(l, k.p) {
				f := strings.Fields(l[len(k.p):])
				if len(f) > 0 {
					*k.v, _ = strconv.ParseInt(f[0], 10, 64)
				}
			}
		}
	}
	return rss, hwm, sc.Err()
}

// procCPU returns the user+system CPU time of a live process.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("bench: bad /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, errors.New("bench: short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100, nil // USER_HZ is 100 on Linux
}

// loadAvg returns the first field of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// shellJoin quotes args for display as one shell command.
func shellJoin(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=,+@%", r))
		}) < 0 {
			b.WriteString(a)
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "'")
	}
	return b.String()
}

// writeLines writes one string per line.
func writeLines(path string, lines []string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, l := range lines {
		io.WriteString(w, l)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
