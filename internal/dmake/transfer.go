package dmake

import (
	"bufio"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// The transfer channel (3.4.5, 3.5.5), with no framing of its own:
//
//	netsource -> netsink : the transfer key (its bytes, as many as in the messages)
//	netsink -> netsource : the same key, only if it matched
//	netsource -> netsink : the file, zlib-compressed (RFC 1950) with "compress", then FIN
//
// Both sides count the bytes of the file part as they cross the channel
// (compressed when compressed) and report them in their finish; the master
// takes a transfer as done only when both finished "completed" with equal
// counts.

func (e *Executor) sinkListen(j JobSinkListen) (any, error) {
	h := e.handle(j.Key)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.aborted {
		return nil, errAborted
	}
	l, err := net.Listen("tcp", net.JoinHostPort(e.ListenHost, "0"))
	if err != nil {
		return nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	h.listener = e.TLS.Listener(l, nil)
	return port, nil
}

// countingReader counts the bytes read through it, in n and in progress.
type countingReader struct {
	r        io.Reader
	n        int64
	progress *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.progress.Add(int64(n))
	return n, err
}

// progressChunk is how much a plain transfer moves between two updates
// of its progress (each chunk is one sendfile or splice loop).
const progressChunk = 1 << 20

// copyChunks copies src to dst to the end in chunks of progressChunk,
// adding each to progress; dst's ReadFrom (sendfile, splice) still applies
// since io.CopyN hands it an *io.LimitedReader.
func copyChunks(dst io.Writer, src io.Reader, progress *atomic.Int64) (int64, error) {
	var total int64
	for {
		n, err := io.CopyN(dst, src, progressChunk)
		total += n
		progress.Add(n)
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

func (e *Executor) sinkReceive(ctx context.Context, j JobSinkReceive) (any, error) {
	h := e.handle(j.Key)
	h.mu.Lock()
	l, _ := h.listener.(net.Listener)
	h.mu.Unlock()
	if l == nil {
		return nil, errAborted
	}
	// One connection, then the listening port is closed (3.4.5).
	conn, err := l.Accept()
	l.Close()
	if err != nil {
		return nil, fmt.Errorf("dmake: netsink accept: %w", err)
	}
	defer conn.Close()
	h.mu.Lock()
	if h.aborted {
		h.mu.Unlock()
		return nil, errAborted
	}
	h.conn = conn
	h.mu.Unlock()
	key := make([]byte, len(j.Transfer))
	if _, err := io.ReadFull(conn, key); err != nil {
		return nil, fmt.Errorf("dmake: netsink reading the key: %w", err)
	}
	if string(key) != j.Transfer {
		return SinkDone{Mismatch: true}, nil
	}
	if _, err := io.WriteString(conn, j.Transfer); err != nil {
		return nil, fmt.Errorf("dmake: netsink echoing the key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(j.Path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(j.Path), "."+filepath.Base(j.Path)+".recv-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	cr := &countingReader{r: conn, progress: &h.progress}
	var received int64
	if j.Compress {
		var zr io.ReadCloser
		zr, err = zlib.NewReader(bufio.NewReaderSize(cr, 1<<16))
		if err == nil {
			_, err = io.Copy(f, zr)
		}
		// The zlib stream must be followed by the end of the channel.
		if n, _ := io.Copy(io.Discard, cr); err == nil && n > 0 {
			err = errors.New("dmake: netsink: data after the zlib stream")
		}
		received = cr.n
	} else {
		// Plain: the kernel may splice the socket into the file.
		received, err = copyChunks(f, conn, &h.progress)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, j.Path)
	}
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("dmake: netsink receiving %s: %w", j.Path, err)
	}
	return SinkDone{Bytes: received}, nil
}

// countingWriter counts the bytes written through it (in n and in
// progress); with limit > 0 it fails once limit bytes went through, with
// rate > 0 it writes at most rate bytes per second (fault injection).
type countingWriter struct {
	w        io.Writer
	n        int64
	limit    int64
	rate     int64
	start    time.Time
	progress *atomic.Int64
}

var errCut = errors.New("dmake: transfer cut (fault injection)")

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.rate > 0 {
		// Write in pieces of a tenth of a second each, sleeping until
		// the rate allows them.
		done := 0
		for done < len(p) {
			k := min(len(p)-done, int(max(c.rate/10, 1)))
			if c.start.IsZero() {
				c.start = time.Now()
			}
			due := c.start.Add(time.Duration(float64(c.n+int64(k)) / float64(c.rate) * float64(time.Second)))
			time.Sleep(time.Until(due))
			n, err := c.write(p[done : done+k])
			done += n
			if err != nil {
				return done, err
			}
		}
		return done, nil
	}
	return c.write(p)
}

func (c *countingWriter) write(p []byte) (int, error) {
	if c.limit > 0 && c.n+int64(len(p)) > c.limit {
		k := c.limit - c.n
		n, _ := c.w.Write(p[:k])
		c.n += int64(n)
		c.progress.Add(int64(n))
		return n, errCut
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.progress.Add(int64(n))
	return n, err
}

func (e *Executor) sourceSend(ctx context.Context, j JobSourceSend) (any, error) {
	h := e.handle(j.Key)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h.mu.Lock()
	if h.aborted {
		h.mu.Unlock()
		return nil, errAborted
	}
	h.cancel = cancel
	h.mu.Unlock()
	f, err := os.Open(j.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Connect until it works or the task is aborted (3.5.5).
	var conn net.Conn
	var d net.Dialer
	for delay := 50 * time.Millisecond; ; delay = min(delay*2, 2*time.Second) {
		conn, err = e.TLS.Dialer(&d).DialContext(ctx, "tcp", j.Addr)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			return nil, errAborted
		case <-time.After(delay):
		}
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if _, err := io.WriteString(conn, j.Transfer); err != nil {
		return nil, fmt.Errorf("dmake: netsource sending the key: %w", err)
	}
	echo := make([]byte, len(j.Transfer))
	if _, err := io.ReadFull(conn, echo); err != nil {
		return nil, fmt.Errorf("dmake: netsource reading the key: %w", err)
	}
	if string(echo) != j.Transfer {
		return nil, errors.New("dmake: netsource: the netsink echoed another key")
	}
	cw := &countingWriter{w: conn, rate: e.Throttle, progress: &h.progress}
	if e.CutTransfer > 0 && e.cut.CompareAndSwap(false, true) {
		cw.limit = e.CutTransfer
	}
	var sent int64
	if j.Compress || cw.limit > 0 || cw.rate > 0 {
		bw := bufio.NewWriterSize(cw, 1<<16)
		if j.Compress {
			zw, _ := zlib.NewWriterLevel(bw, zlib.BestSpeed)
			_, err = io.Copy(zw, f)
			if err == nil {
				err = zw.Close()
			}
		} else {
			_, err = io.Copy(bw, f)
		}
		if err == nil {
			err = bw.Flush()
		}
		sent = cw.n
	} else {
		// Plain: the kernel may send the file itself (sendfile).
		sent, err = copyChunks(conn, f, &h.progress)
	}
	if err != nil {
		return nil, fmt.Errorf("dmake: netsource sending %s: %w", j.Path, err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	return sent, nil
}
