package clustertest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/testenv"
)

// ---- frames by hand ----

// handFrame builds a frame from marshal pieces: '(' 2 '{' key value ... '0'
// 'i' priority, with the big-endian length in front (MS-FSCMT 2.2.1).
func handFrame(prio int32, pairs ...[]byte) []byte {
	var body bytes.Buffer
	body.WriteByte('(')
	binary.Write(&body, binary.LittleEndian, int32(2))
	body.WriteByte('{')
	for _, p := range pairs {
		body.Write(p)
	}
	body.WriteByte('0')
	body.Write(mInt(prio))
	out := binary.BigEndian.AppendUint32(nil, uint32(body.Len()))
	return append(out, body.Bytes()...)
}

func mStr(s string) []byte {
	b := []byte{'s'}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func mInt(i int32) []byte {
	return binary.LittleEndian.AppendUint32([]byte{'i'}, uint32(i))
}

func mTuple(items ...[]byte) []byte {
	b := binary.LittleEndian.AppendUint32([]byte{'('}, uint32(len(items)))
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

func kv(k string, v []byte) []byte { return append(mStr(k), v...) }

// pyFrame encodes a Python expression (a (message dict, priority) tuple,
// bytes keys as Python 2 str) with CPython's marshal, version 2.
func pyFrame(t testing.TB, expr string) []byte {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 not found on this machine")
	}
	script := "import marshal, struct, sys\nb = marshal.dumps(" + expr + ", 2)\nsys.stdout.buffer.write(struct.pack('>I', len(b)) + b)\n"
	out, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return out
}

// ---- a raw peer ----

type rawPeer struct {
	t  testing.TB
	c  net.Conn
	fr *cmt.FrameReader
}

func dialRaw(t testing.TB, addr, local string) *rawPeer {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second}
	if local != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(local)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawPeer{t: t, c: c, fr: cmt.NewFrameReader(c, cmt.DefaultMaxFrame)}
}

func acceptRaw(t testing.TB, ln net.Listener) *rawPeer {
	t.Helper()
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() { c, err := ln.Accept(); ch <- res{c, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		t.Cleanup(func() { r.c.Close() })
		return &rawPeer{t: t, c: r.c, fr: cmt.NewFrameReader(r.c, cmt.DefaultMaxFrame)}
	case <-time.After(30 * time.Second):
		t.Fatal("no connection")
		return nil
	}
}

func (p *rawPeer) write(b []byte) {
	p.t.Helper()
	if _, err := p.c.Write(b); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

func (p *rawPeer) send(m cmt.Message) {
	p.t.Helper()
	b, err := cmt.EncodeFrame(m, cmt.DefaultPriority(m.Code()))
	if err != nil {
		p.t.Fatal(err)
	}
	p.write(b)
}

// read returns the next message, or an error (io.EOF: closed).
func (p *rawPeer) read(limit time.Duration) (cmt.Message, error) {
	p.c.SetReadDeadline(time.Now().Add(limit))
	body, err := p.fr.ReadFrame()
	if err != nil {
		return nil, err
	}
	f, err := cmt.DecodeFrame(body)
	if err != nil {
		return nil, err
	}
	return f.Message, nil
}

// expect reads messages until one for which ok is true, answering
// keep-alives on the way when answer is set.
func (p *rawPeer) expect(what string, limit time.Duration, ok func(cmt.Message) bool) cmt.Message {
	p.t.Helper()
	deadline := time.Now().Add(limit)
	var seen []string
	for {
		left := time.Until(deadline)
		if left <= 0 {
			p.t.Fatalf("no %s within %v; got %v", what, limit, seen)
		}
		m, err := p.read(left)
		if err != nil {
			p.t.Fatalf("waiting for %s: %v (got %v)", what, err, seen)
		}
		if ok(m) {
			return m
		}
		seen = append(seen, m.Code().String())
	}
}

// expectClosed reads until the peer closes the connection, failing on any
// message.
func (p *rawPeer) expectClosed(limit time.Duration) {
	p.t.Helper()
	m, err := p.read(limit)
	if err == nil {
		p.t.Fatalf("got %s, want the connection closed", m.Code())
	}
	if !errors.Is(err, io.EOF) && !isReset(err) {
		p.t.Fatalf("want the connection closed, got %v", err)
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "EOF"))
}

func is[T cmt.Message](m cmt.Message) bool { _, ok := m.(T); return ok }

// ---- the multinode scheduler ----

const rawConfig = `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="raw">
    <attrib name="start_uris" type="list-string">
      <member>http://site1.raw.test/</member>
    </attrib>
    <section name="pp">
      <attrib name="use_dupservers" type="boolean">yes</attrib>
    </section>
    <section name="ppdup">
      <attrib name="cachesize" type="integer">64</attrib>
    </section>
  </DomainSpecification>
</CrawlerConfig>
`

func writeRawConfig(t testing.TB) (cfgPath, hosts string) {
	dir := t.TempDir()
	cfgPath = filepath.Join(dir, "raw.xml")
	hosts = filepath.Join(dir, "hosts")
	if err := os.WriteFile(cfgPath, []byte(rawConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hosts, []byte("127.3.0.1 site1.raw.test\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfgPath, hosts
}

var mnsListening = regexp.MustCompile(`listening for node schedulers" addr=(\S+)`)

// TestRawMultinode speaks to a `trawl multinode` process with hand-built
// frames and Python-marshalled ones.
func TestRawMultinode(t *testing.T) {
	cfgPath, hosts := writeRawConfig(t)
	mns := startProc(t, "multinode", "multinode", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "mns"),
		"--config", cfgPath, "--hosts-file", hosts, "--keepalive", "1s", "--admin-listen", "off", "--log-level", "debug",
		"--allow", "127.0.0.1/32", "--allow", "127.0.0.7")
	addr := mns.waitLine(mnsListening, 0, 30*time.Second)[1]

	t.Run("a message before CMD_UM_INIT closes the connection", func(t *testing.T) {
		p := dialRaw(t, addr, "")
		p.write(handFrame(1, kv("cm", mInt(int32(cmt.CmdUMKeepalive)))))
		p.expectClosed(10 * time.Second)
		mns.waitLine(regexp.MustCompile(`first message is not CMD_UM_INIT`), 0, 10*time.Second)
	})

	t.Run("INIT in Python marshal, then the collection, routes asked, keep-alive answered; a duplicate id is refused", func(t *testing.T) {
		p := dialRaw(t, addr, "")
		p.write(pyFrame(t, "({b'cm': 24, b'mi': b'py-n1', b'xp': (b'localhost', 10000)}, 1)"))
		// 3.2.5.1: the collection, then (a first registration) ASK_ROUTE.
		add := p.expect("CMD_ADM_CONF_ADD", 10*time.Second, is[*cmt.AdmConfAdd]).(*cmt.AdmConfAdd)
		if add.Collection != "raw" || add.Epoch != 1 {
			t.Errorf("CONF_ADD collection %q epoch %d", add.Collection, add.Epoch)
		}
		m, err := p.read(10 * time.Second)
		if err != nil || !is[*cmt.UMAskRoute](m) {
			t.Fatalf("after CONF_ADD: %v %v, want CMD_UM_ASK_ROUTE", m, err)
		}
		// The node has no route: LAST_ROUTE at once. The start URI is
		// routed to it with its address.
		p.send(&cmt.UMLastRoute{Collection: "raw"})
		r := p.expect("CMD_UM_ADD_ROUTE", 10*time.Second, is[*cmt.UMAddRoute]).(*cmt.UMAddRoute)
		if r.Site != "site1.raw.test" || r.NodeID != "py-n1" || len(r.Addrs) != 1 || r.Addrs[0].IP != "127.3.0.1" {
			t.Errorf("route %+v", r)
		}
		u := p.expect("CMD_UM_URI", 10*time.Second, is[*cmt.UMURI]).(*cmt.UMURI)
		if u.Entry.URI.URI != "http://site1.raw.test/" {
			t.Errorf("URI %q", u.Entry.URI.URI)
		}
		// A keep-alive (hand-built) is answered.
		p.write(handFrame(1, kv("cm", mInt(int32(cmt.CmdUMKeepalive)))))
		p.expect("CMD_UM_KEEPALIVE_ACK", 10*time.Second, is[*cmt.UMKeepaliveAck])

		// The same node id on a second connection (hand-built INIT) is
		// refused; the first connection lives on.
		q := dialRaw(t, addr, "")
		q.write(handFrame(1, kv("cm", mInt(int32(cmt.CmdUMInit))), kv("mi", mStr("py-n1")), kv("xp", mTuple(mStr("localhost"), mInt(10001)))))
		q.expectClosed(10 * time.Second)
		mns.waitLine(regexp.MustCompile(`node identifier already registered, closing the connection.* node=py-n1`), 0, 10*time.Second)
		p.send(&cmt.UMKeepalive{})
		p.expect("CMD_UM_KEEPALIVE_ACK", 10*time.Second, is[*cmt.UMKeepaliveAck])
	})

	t.Run("a node that answers no keep-alive is dropped as dead", func(t *testing.T) {
		p := dialRaw(t, addr, "")
		p.send(&cmt.UMInit{NodeID: "silent", AdminHost: "localhost", AdminPort: 1})
		p.expect("CMD_UM_KEEPALIVE", 10*time.Second, is[*cmt.UMKeepalive])
		// Keep reading (and never answering) until the scheduler closes.
		deadline := time.Now().Add(15 * time.Second)
		for {
			_, err := p.read(time.Until(deadline))
			if err != nil {
				if !isReset(err) {
					t.Fatalf("want the connection closed, got %v", err)
				}
				break
			}
		}
		mns.waitLine(regexp.MustCompile(`node scheduler dead \(keep-alives unanswered\), closing its connection" node=silent`), 0, 10*time.Second)
	})

	t.Run("a peer off the allow-list is refused", func(t *testing.T) {
		p := dialRaw(t, addr, "127.0.0.9")
		p.send(&cmt.UMInit{NodeID: "outsider", AdminHost: "localhost", AdminPort: 1})
		p.expectClosed(10 * time.Second)
		mns.waitLine(regexp.MustCompile(`not on the allow-list refused" remote=127.0.0.9:`), 0, 10*time.Second)
		q := dialRaw(t, addr, "127.0.0.7")
		q.send(&cmt.UMInit{NodeID: "insider", AdminHost: "localhost", AdminPort: 1})
		q.expect("CMD_ADM_CONF_ADD", 10*time.Second, is[*cmt.AdmConfAdd])
	})
}

// ---- the duplicate server ----

// TestRawDupserver speaks to a `trawl dupserver` process as two node
// schedulers and as its replica.
func TestRawDupserver(t *testing.T) {
	rln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rln.Close()
	ds := startProc(t, "dupserver", "dupserver", "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--id", "ds-raw",
		"--replica", rln.Addr().String(), "--log-level", "debug")
	addr := ds.waitLine(dsListening, 0, 30*time.Second)[1]
	rep := acceptRaw(t, rln)

	n1 := dialRaw(t, addr, "")
	col := cmt.Collection{Name: "raw", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.IntAttrib("dupservers_count", 1)}}}
	n1.send(&cmt.PPDUPSetConfig{Collection: "raw", Config: cmt.CrawlConfig{Collections: []cmt.Collection{col}}, VClock: 7})

	// 3.3.5.1: the node scheduler's ACK echoes its clock at once.
	ack := n1.expect("PPDUP_CONFIG_ACK", 10*time.Second, is[*cmt.PPDUPConfigAck]).(*cmt.PPDUPConfigAck)
	if ack.VClock != 7 {
		t.Errorf("CONFIG_ACK vc %d, want 7", ack.VClock)
	}

	// PPDUP_ADD in Python marshal. The configuration goes to the replica
	// first (the transition state): a stale ACK from the replica is
	// ignored, the right one ends the transition. Then the ADD is
	// forwarded, and answered only after the replica's answer.
	cs := strings.Repeat("\\x11", 16)
	n1.write(pyFrame(t, "({b'cm': 52, b'dn': b'raw', b'id': b'n1', b'ur': b'http://a.test/1', b'cs': b'"+cs+"'}, 0)"))
	sc := rep.expect("PPDUP_SET_CONFIG at the replica", 10*time.Second, is[*cmt.PPDUPSetConfig]).(*cmt.PPDUPSetConfig)
	if sc.Collection != "raw" || sc.VClock < 1 {
		t.Errorf("forwarded SET_CONFIG %+v", sc)
	}
	rep.send(&cmt.PPDUPConfigAck{VClock: sc.VClock - 1})
	ds.waitLine(regexp.MustCompile(`stale PPDUP_CONFIG_ACK from the replica ignored`), 0, 10*time.Second)
	rep.send(&cmt.PPDUPConfigAck{VClock: sc.VClock})
	fwd := rep.expect("PPDUP_ADD at the replica", 10*time.Second, is[*cmt.PPDUPAdd]).(*cmt.PPDUPAdd)
	if fwd.URI != "http://a.test/1" || fwd.NodeID != "n1" || fwd.PPDUPID != "ds-raw" {
		t.Errorf("forwarded ADD %+v", fwd)
	}
	if m, err := n1.read(300 * time.Millisecond); err == nil {
		t.Fatalf("node scheduler got %s before the replica answered", m.Code())
	}
	rep.send(&cmt.PPDUPAddOK{Collection: fwd.Collection, NodeID: fwd.NodeID, URI: fwd.URI, Checksum: fwd.Checksum, PPDUPID: fwd.PPDUPID, DBName: fwd.DBName})
	ok := n1.expect("PPDUP_ADD_OK", 10*time.Second, is[*cmt.PPDUPAddOK]).(*cmt.PPDUPAddOK)
	if ok.URI != "http://a.test/1" || (ok.OwnerURI != "" && ok.OwnerURI != ok.URI) {
		t.Errorf("ADD_OK %+v, want the URI to own the checksum", ok)
	}

	// A second node scheduler adds the same checksum (hand-built frame):
	// the first URI owns it.
	n2 := dialRaw(t, addr, "")
	csum := bytes.Repeat([]byte{0x11}, 16)
	n2.write(handFrame(0, kv("cm", mInt(int32(cmt.CmdPPDUPAdd))), kv("dn", mStr("raw")), kv("id", mStr("n2")),
		kv("ur", mStr("http://b.test/1")), kv("cs", mStr(string(csum)))))
	if m, err := rep.read(2 * time.Second); err == nil {
		// An ADD of an owned checksum changes nothing; a replica message
		// would have to be answered in order.
		if a, isAdd := m.(*cmt.PPDUPAdd); isAdd {
			rep.send(&cmt.PPDUPAddOK{Collection: a.Collection, NodeID: a.NodeID, URI: a.URI, Checksum: a.Checksum, PPDUPID: a.PPDUPID, DBName: a.DBName})
		}
	}
	ok2 := n2.expect("PPDUP_ADD_OK", 10*time.Second, is[*cmt.PPDUPAddOK]).(*cmt.PPDUPAddOK)
	if ok2.URI != "http://b.test/1" || ok2.OwnerURI != "http://a.test/1" {
		t.Errorf("second ADD_OK %+v, want owner http://a.test/1", ok2)
	}
}

// ---- the node scheduler ----

// TestRawNode runs a `trawl node` process against a multinode scheduler
// and a duplicate server made of raw frames.
func TestRawNode(t *testing.T) {
	mln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mln.Close()
	dln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer dln.Close()
	node := startProc(t, "node", "node", "--id", "raw-n", "--multinode", mln.Addr().String(), "--dupserver", dln.Addr().String(),
		"--data", t.TempDir(), "--listen", "off", "--keepalive", "1s", "--log-level", "debug", "--source-ip", "127.0.0.21")

	// 3.2.5.1: CMD_UM_INIT is the first message.
	mns := acceptRaw(t, mln)
	first, err := mns.read(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	init, ok := first.(*cmt.UMInit)
	if !ok || init.NodeID != "raw-n" {
		t.Fatalf("first message %T %+v, want CMD_UM_INIT from raw-n", first, first)
	}
	if host, _, _ := net.SplitHostPort(mns.c.RemoteAddr().String()); host != "127.0.0.21" {
		t.Errorf("node connected from %s, want --source-ip 127.0.0.21", host)
	}
	// A keep-alive (hand-built) is answered.
	mns.write(handFrame(1, kv("cm", mInt(int32(cmt.CmdUMKeepalive)))))
	mns.expect("CMD_UM_KEEPALIVE_ACK", 10*time.Second, is[*cmt.UMKeepaliveAck])

	// The collection; it uses the duplicate servers.
	cfg, err := config.Parse("raw.xml", []byte(rawConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	mns.send(&cmt.AdmConfAdd{Collection: "raw", Config: cmt.CrawlConfig{Collections: []cmt.Collection{cmtconfig.CrawlConfig(cfg.Collections[0])}}, Epoch: 1})
	// ASK_ROUTE is answered with every route and LAST_ROUTE.
	mns.send(&cmt.UMAddRoute{Collection: "raw", NodeID: "other", RouteAttr: "x.raw.test", Site: "x.raw.test", TTL: 60})
	mns.send(&cmt.UMAskRoute{Collection: "raw"})
	rr := mns.expect("CMD_UM_ADD_ROUTE (reply)", 10*time.Second, is[*cmt.UMAddRouteReply]).(*cmt.UMAddRouteReply)
	if len(rr.Routes) != 1 || rr.Routes[0].NodeID != "other" || rr.Routes[0].Attr != "x.raw.test" {
		t.Errorf("routes %+v", rr.Routes)
	}
	if m, err := mns.read(10 * time.Second); err != nil {
		t.Fatal(err)
	} else if lr, ok := m.(*cmt.UMLastRoute); !ok || lr.Collection != "raw" {
		// Keep-alives may come in between.
		if !is[*cmt.UMKeepalive](m) && !is[*cmt.UMDNSRequest](m) && !is[*cmt.UMURI](m) {
			t.Errorf("after the routes: %T, want CMD_UM_LAST_ROUTE", m)
		}
	}

	// The duplicate server gets the ppdup section with a vector clock; a
	// stale ACK is ignored.
	dsc := acceptRaw(t, dln)
	sc := dsc.expect("PPDUP_SET_CONFIG", 10*time.Second, is[*cmt.PPDUPSetConfig]).(*cmt.PPDUPSetConfig)
	if sc.Collection != "raw" || sc.VClock < 1 {
		t.Errorf("SET_CONFIG %+v", sc)
	}
	dsc.send(&cmt.PPDUPConfigAck{VClock: sc.VClock - 1})
	node.waitLine(regexp.MustCompile(`stale PPDUP_CONFIG_ACK ignored`), 0, 10*time.Second)
	dsc.send(&cmt.PPDUPConfigAck{VClock: sc.VClock})

	// This duplicate server answers no keep-alive: the node drops the link
	// as dead and dials again.
	deadline := time.Now().Add(20 * time.Second)
	for {
		m, err := dsc.read(time.Until(deadline))
		if err != nil {
			if !isReset(err) {
				t.Fatalf("want the link dropped, got %v", err)
			}
			break
		}
		_ = m
	}
	node.waitLine(regexp.MustCompile(`peer dead \(keep-alives unanswered\), dropping the link" peer="dupserver 0"`), 0, 10*time.Second)
	again := acceptRaw(t, dln)
	again.expect("PPDUP_SET_CONFIG on the new link", 10*time.Second, is[*cmt.PPDUPSetConfig])
}
