package pebblefs

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble"
	"github.com/cockroachdb/pebble/vfs"
)

// The child: commit keys 0, 1, 2, ... one batch each, printing each key
// once its commit returned, until killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("PEBBLEFS_CHILD_DIR"); dir != "" {
		child(dir, os.Getenv("PEBBLEFS_CHILD_MODE"))
		return
	}
	os.Exit(m.Run())
}

func child(dir, mode string) {
	opts := &pebble.Options{FS: ProcessDurable(vfs.Default)}
	wo := pebble.Sync
	if mode == "nosync" {
		opts.FS, wo = vfs.Default, pebble.NoSync
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		b := db.NewBatch()
		_ = b.Set([]byte(fmt.Sprintf("k%09d", i)), make([]byte, 100), nil)
		if err := b.Commit(wo); err != nil {
			fmt.Println("commit:", err)
			os.Exit(1)
		}
		fmt.Fprintln(out, i)
		out.Flush()
	}
}

// killAndCount runs the child in mode, kills it with SIGKILL after it
// reported at least n commits, and returns how many reported commits the
// reopened database lacks.
func killAndCount(t *testing.T, mode string, n int) (reported, lost int) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PEBBLEFS_CHILD_DIR="+dir, "PEBBLEFS_CHILD_MODE="+mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stdout)
	last := -1
	deadline := time.Now().Add(60 * time.Second)
	for sc.Scan() {
		i, err := strconv.Atoi(sc.Text())
		if err != nil {
			t.Fatalf("child: %s", sc.Text())
		}
		last = i
		if i >= n || time.Now().After(deadline) {
			// SIGKILL right after a reported commit, while the child
			// keeps committing.
			_ = cmd.Process.Signal(syscall.SIGKILL)
			break
		}
	}
	_ = cmd.Wait()
	db, err := pebble.Open(dir, &pebble.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i <= last; i++ {
		if _, c, err := db.Get([]byte(fmt.Sprintf("k%09d", i))); err != nil {
			lost++
		} else {
			c.Close()
		}
	}
	return last + 1, lost
}

// TestProcessDurableSurvivesSIGKILL: every commit the child saw return is
// in the database after SIGKILL, five kills in a row. The same child with
// pebble.NoSync on the plain file system is run for comparison: it
// typically loses the commits still in Pebble's log buffer (logged, not
// asserted: how many depends on the scheduler).
func TestProcessDurableSurvivesSIGKILL(t *testing.T) {
	for round := range 5 {
		reported, lost := killAndCount(t, "durable", 2000+round*500)
		if lost > 0 {
			t.Errorf("round %d: %d of %d commits that returned are gone after SIGKILL", round, lost, reported)
		}
	}
	reported, lost := killAndCount(t, "nosync", 2000)
	t.Logf("pebble.NoSync on the plain file system: %d of %d returned commits lost after SIGKILL", lost, reported)
}

// BenchmarkCommit compares one small batch per commit: NoSync, Sync on
// ProcessDurable (write(2) per commit) and Sync on the plain file system
// (fsync per commit).
//
//	go test -run '^$' -bench Commit ./internal/pebblefs
func BenchmarkCommit(b *testing.B) {
	for _, c := range []struct {
		name string
		fs   vfs.FS
		wo   *pebble.WriteOptions
	}{{"nosync", vfs.Default, pebble.NoSync}, {"process-durable", ProcessDurable(vfs.Default), pebble.Sync}, {"fsync", vfs.Default, pebble.Sync}} {
		b.Run(c.name, func(b *testing.B) {
			db, err := pebble.Open(b.TempDir(), &pebble.Options{FS: c.fs})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			v := make([]byte, 100)
			for i := 0; b.Loop(); i++ {
				bt := db.NewBatch()
				_ = bt.Set([]byte(fmt.Sprintf("k%09d", i)), v, nil)
				if err := bt.Commit(c.wo); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
