package dmake

import (
	"bufio"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// benchFile writes size bytes of table-like text (compressible as real
// tables are).
func benchFile(b *testing.B, path string, size int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < size; {
		line := []byte("k0000000 -000 w00000000\n")
		for i := 1; i < 8; i++ {
			line[i] = '0' + byte(r.IntN(10))
		}
		for i := 15; i < 23; i++ {
			line[i] = "0123456789abcdef"[r.IntN(16)]
		}
		k, _ := w.Write(line)
		n += k
	}
	w.Flush()
	f.Close()
}

// BenchmarkTransfer moves a 128 MiB file over loopback: a raw TCP copy (the
// limit), and a netsource -> netsink transfer with and without zlib.
//
//	go test -run '^$' -bench Transfer -benchtime 3x ./internal/dmake
func BenchmarkTransfer(b *testing.B) {
	const size = 128 << 20
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	benchFile(b, src, size)
	b.Run("raw-tcp", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				c, err := l.Accept()
				l.Close()
				if err != nil {
					done <- err
					return
				}
				f, _ := os.Create(filepath.Join(dir, "dst-raw"))
				_, err = io.Copy(f, c)
				c.Close()
				f.Close()
				done <- err
			}()
			c, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			f, _ := os.Open(src)
			io.Copy(c, f)
			f.Close()
			c.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, compress := range []bool{false, true} {
		name := "netsource-netsink"
		if compress {
			name += "-zlib"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			ex := &Executor{ListenHost: "127.0.0.1"}
			ctx := context.Background()
			for i := 0; i < b.N; i++ {
				sink, srck := TaskKey{1, "1"}, TaskKey{2, "2"}
				port, err := ex.Do(ctx, JobSinkListen{Key: sink})
				if err != nil {
					b.Fatal(err)
				}
				key := TransferKey("dst", uint64(i))
				done := make(chan error, 1)
				go func() {
					_, err := ex.Do(ctx, JobSinkReceive{Key: sink, Path: filepath.Join(dir, "dst"), Transfer: key, Compress: compress})
					done <- err
				}()
				_, err = ex.Do(ctx, JobSourceSend{Key: srck, Path: src, Addr: net.JoinHostPort("127.0.0.1", itoa(port.(int))), Transfer: key, Compress: compress})
				if err != nil {
					b.Fatal(err)
				}
				if err := <-done; err != nil {
					b.Fatal(err)
				}
				ex.Do(ctx, JobRelease{Key: sink})
				ex.Do(ctx, JobRelease{Key: srck})
			}
		})
	}
}

func itoa(n int) string {
	return string(appendInt(nil, n))
}

func appendInt(b []byte, n int) []byte {
	if n >= 10 {
		b = appendInt(b, n/10)
	}
	return append(b, byte('0'+n%10))
}
