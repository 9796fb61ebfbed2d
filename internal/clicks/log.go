package clicks

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Log file kinds under LogDir: DATE.KIND, DATE the UTC day (YYYY-MM-DD).
const (
	KindQueries = "queries" // QUERYID DATE QUERY
	KindClicks  = "clicks"  // URLID QUERYID LCID DATE POS
	KindURLs    = "urls"    // URLID DATE URL
)

// Dir returns the click relevance's directory under a data directory.
func Dir(data string) string { return filepath.Join(data, "clicks") }

// LogDir returns the directory of the query and click logs.
func LogDir(data string) string { return filepath.Join(Dir(data), "log") }

// StateDir returns the directory of the last click build's kept tables.
func StateDir(data string) string { return filepath.Join(Dir(data), "state") }

// RelevancePath returns the relevance table the index reads.
func RelevancePath(data string) string { return filepath.Join(StateDir(data), OutRelevance) }

// Limits of what one log record holds.
const (
	// MaxQueryBytes caps a logged query (the index's parser reads no more).
	MaxQueryBytes = 2048
	// MaxURLBytes caps a logged URL.
	MaxURLBytes = 8192
)

// Log appends the queries and clicks of a search front end to the log
// files of a directory. Every record is one write(2) to a file opened
// with O_APPEND, so several processes may log into the same directory.
// Its methods are safe for concurrent use.
type Log struct {
	dir  string
	lcid string
	key  []byte
	now  func() time.Time
	mu   sync.Mutex
	seq  uint64
}

// OpenLog creates dir if needed and returns a log writing into it, with a
// fresh LCID (this writer's identity: 8 random hex digits). now is the
// clock (time.Now if nil).
func OpenLog(dir string, now func() time.Time) (*Log, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("clicks: %w", err)
	}
	var b [4 + 32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("clicks: %w", err)
	}
	if now == nil {
		now = time.Now
	}
	return &Log{dir: dir, lcid: hex.EncodeToString(b[:4]), key: b[4:], now: now}, nil
}

// LCID returns the writer's identity.
func (l *Log) LCID() string { return l.lcid }

func (l *Log) append(kind string, t time.Time, rec string) error {
	name := filepath.Join(l.dir, t.UTC().Format(time.DateOnly)+"."+kind)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("clicks: %w", err)
	}
	_, err = f.WriteString(rec + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("clicks: %w", err)
	}
	return nil
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05Z") }

// Query logs a query and returns its ID (QUERYID without the LCID: 16 hex
// digits), which the click redirect carries.
func (l *Log) Query(q string) (string, error) {
	if len(q) > MaxQueryBytes {
		q = q[:MaxQueryBytes]
	}
	l.mu.Lock()
	l.seq++
	id := fmt.Sprintf("%016x", l.seq)
	l.mu.Unlock()
	t := l.now()
	return id, l.append(KindQueries, t, id+l.lcid+" "+stamp(t)+" "+escape(strings.ToValidUTF8(q, "")))
}

// URLID returns the key of a URL in the click tables: the first 8 bytes of
// the MD5 of the URL, 16 hex digits (the web analyzer's URLHASH).
func URLID(u string) string {
	s := md5.Sum([]byte(u))
	return hex.EncodeToString(s[:8])
}

// ValidQueryID reports whether id can be a query ID of Query.
func ValidQueryID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := strconv.ParseUint(id, 16, 64)
	return err == nil
}

// Click logs a click on result u (1-based position pos) of query id.
func (l *Log) Click(id, u string, pos int) error {
	if !ValidQueryID(id) {
		return fmt.Errorf("clicks: bad query id %q", id)
	}
	if len(u) > MaxURLBytes || u == "" || strings.ContainsAny(u, " \n\r\t") {
		return fmt.Errorf("clicks: bad URL %q", u)
	}
	t := l.now()
	uid := URLID(u)
	if err := l.append(KindURLs, t, uid+" "+stamp(t)+" "+u); err != nil {
		return err
	}
	return l.append(KindClicks, t, uid+" "+id+" "+l.lcid+" "+stamp(t)+" "+strconv.Itoa(max(pos, 0)))
}

// Sign returns the signature of a click redirect (query id and URL): the
// redirect only sends a browser on to a URL this writer put on a result
// page, so it is no open redirect. The key lives as long as the writer.
func (l *Log) Sign(id, u string) string {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte(id + "\n" + u))
	return hex.EncodeToString(m.Sum(nil)[:12])
}

// Verify checks a signature of Sign.
func (l *Log) Verify(id, u, sig string) bool {
	want := l.Sign(id, u)
	return hmac.Equal([]byte(want), []byte(sig))
}
