package distrib

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib/etcdreg"
	"github.com/trawl/trawl/internal/distrib/etcdreg/etcdtest"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/testenv"
)

type running struct {
	s      *Server
	cancel func()
	done   chan error
}

func (r *running) stop(t *testing.T) {
	r.cancel()
	if err := <-r.done; err != nil {
		t.Error(err)
	}
}

func startNS(t *testing.T) string {
	ns, err := nameserver.NewServer(nameserver.ServerConfig{Listen: "127.0.0.1:0", Dir: t.TempDir(), PingInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ns.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return ns.Addr()
}

func itoa(i int) string { return strconv.Itoa(i) }

func startCD(t *testing.T, ns string, id int64, base int) *running {
	t.Helper()
	return startCDWith(t, nameserver.NewClient(ns, &wire.Client{Timeout: time.Second}), id, base)
}

func startCDWith(t *testing.T, reg nameserver.Registry, id int64, base int) *running {
	t.Helper()
	s, err := NewServer(ServerConfig{
		Config: Config{NodeID: id, Host: "127.0.0.1", BasePort: base, Collections: []string{"web"},
			CheckMaster: 200 * time.Millisecond, PingMaster: 200 * time.Millisecond},
		Listen:   "127.0.0.1",
		Registry: reg,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{s: s, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.Run(ctx) }()
	return r
}

func statuses(t *testing.T, cds map[int64]*running) map[int64]Status {
	out := map[int64]Status{}
	for id, r := range cds {
		st, err := r.s.Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out[id] = st
	}
	return out
}

// settled reports the master's id once exactly one distributor is master,
// every other one is its backup, and it has registered them all.
func settled(t *testing.T, cds map[int64]*running) (int64, bool) {
	sts := statuses(t, cds)
	var master int64 = -1
	for id, st := range sts {
		if st.Role == Master {
			if master >= 0 {
				return 0, false
			}
			master = id
		}
	}
	if master < 0 {
		return 0, false
	}
	addr := cds[master].s.Addr()
	for id, st := range sts {
		if id != master && (st.Role != Backup || st.Master != addr) {
			return 0, false
		}
	}
	return master, len(sts[master].Nodes) == len(cds)
}

func waitSettled(t *testing.T, cds map[int64]*running) int64 {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m, ok := settled(t, cds); ok {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no single master with every other distributor its backup: %+v", statuses(t, cds))
	return 0
}

// TestElectionOverTCP: a name server and three distributors on loopback,
// started at the same instant: exactly one master, the others its
// registered backups. The master stops (its listeners close): a backup
// takes over after its missed pings and the other registers with it; the
// old master comes back at its address and becomes a backup.
func TestElectionOverTCP(t *testing.T) {
	ns := startNS(t)
	testElection(t, func(id int64, base int) *running { return startCD(t, ns, id, base) })
}

// TestElectionEtcd is TestElectionOverTCP with etcd as the registry (each
// distributor with its own client and lease).
func TestElectionEtcd(t *testing.T) {
	ep := etcdtest.Start(t)
	testElection(t, func(id int64, base int) *running {
		reg, err := etcdreg.New([]string{"http://" + ep}, etcdreg.Options{TTL: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { reg.Close() })
		return startCDWith(t, reg, id, base)
	})
}

func testElection(t *testing.T, start func(id int64, base int) *running) {
	cds := map[int64]*running{}
	bases := map[int64]int{}
	for id := int64(1); id <= 3; id++ {
		bases[id] = testenv.FreeBasePort(t, wire.PortInternal, wire.PortExternal)
	}
	for id := int64(1); id <= 3; id++ {
		cds[id] = start(id, bases[id])
	}
	defer func() {
		for _, r := range cds {
			r.stop(t)
		}
	}()
	master := waitSettled(t, cds)
	t.Logf("master %d", master)

	old := cds[master]
	delete(cds, master)
	stopped := time.Now()
	old.stop(t)
	newMaster := waitSettled(t, cds)
	if newMaster == master {
		t.Fatal("the stopped master is still master")
	}
	t.Logf("distributor %d took over after %v", newMaster, time.Since(stopped))

	cds[master] = start(master, bases[master])
	if m := waitSettled(t, cds); m != newMaster {
		t.Errorf("the returning old master %d took the master role from %d (now %d)", master, newMaster, m)
	}
}

// TestGarbageOnListeners: bytes that are not frames close that connection;
// the distributor keeps serving.
func TestGarbageOnListeners(t *testing.T) {
	ns := startNS(t)
	base := testenv.FreeBasePort(t, wire.PortInternal, wire.PortExternal)
	r := startCD(t, ns, 1, base)
	defer r.stop(t)
	waitSettled(t, map[int64]*running{1: r})
	for _, off := range []int{wire.PortInternal, wire.PortExternal} {
		c, err := net.Dial("tcp", net.JoinHostPort("127.0.0.1", itoa(base+off)))
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("\x00\x01garbage that is no frame\r\n\r\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil {
			t.Errorf("port +%d answered garbage", off)
		}
		c.Close()
	}
	cl := &wire.Client{Timeout: 2 * time.Second}
	defer cl.Close()
	ctx := context.Background()
	if _, err := cl.Call(ctx, r.s.Addr(), wire.IfaceSessionFactory, wire.MethodPing); err != nil {
		t.Fatalf("ping after garbage: %v", err)
	}
	_, err := cl.Call(ctx, r.s.Addr(), wire.IfaceDispatcherNode, "create", wire.I64(1), wire.Str("nope"), wire.GuaranteeSet(0), wire.I64(0), wire.Bln(false))
	if !wire.IsException(err, wire.ExcUnknownCollection) {
		t.Errorf("unknown collection: %v", err)
	}
	_, err = cl.Call(ctx, r.s.Addr(), wire.IfaceDispatcherNode, "create", wire.I64(1), wire.Str("web"), wire.GuaranteeSet(3), wire.I64(0), wire.Bln(false))
	if !wire.IsException(err, wire.ExcUnsupportedGuarantees) {
		t.Errorf("non-zero feeding priority: %v", err)
	}
	f, err := cl.Call(ctx, r.s.Addr(), wire.IfaceDispatcherNode, "create", wire.I64(1), wire.Str("web"), wire.GuaranteeSet(0), wire.I64(0), wire.Bln(false))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if a, err := wire.ParseAOR(f.Arg(0)); err != nil || a.Type != wire.IfaceSession || a.Port != base+wire.PortInternal {
		t.Errorf("session AOR %v %v", a, err)
	}
}
