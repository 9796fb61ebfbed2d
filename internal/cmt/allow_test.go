package cmt

import (
	"net"
	"testing"
	"time"
)

func TestAllowList(t *testing.T) {
	a, err := ParseAllowList([]string{"127.0.0.2", "10.0.0.0/8,::1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.2"), Port: 1}, true},
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.3"), Port: 1}, false},
		{&net.TCPAddr{IP: net.ParseIP("10.200.1.1"), Port: 1}, true},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, true},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:10.0.0.1"), Port: 1}, true},
		{fakeAddr("mem:1"), true},
	}
	for _, tt := range tests {
		t.Run(tt.addr.String(), func(t *testing.T) {
			if got := a.Allows(tt.addr); got != tt.want {
				t.Errorf("Allows(%v) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
	if !(AllowList{}).Allows(&net.TCPAddr{IP: net.ParseIP("8.8.8.8")}) {
		t.Error("the empty list refuses a peer")
	}
	for _, bad := range []string{"10.0.0.0/33", "host.example", "1.2.3"} {
		if _, err := ParseAllowList([]string{bad}); err == nil {
			t.Errorf("ParseAllowList(%q): no error", bad)
		}
	}
}

type fakeAddr string

func (m fakeAddr) Network() string { return "mem" }
func (m fakeAddr) String() string  { return string(m) }

func TestAllowListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, _ := ParseAllowList([]string{"127.0.0.7/32"})
	refused := make(chan net.Addr, 4)
	aln := AllowListener(ln, a, func(r net.Addr) { refused <- r })
	defer aln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := aln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	// From 127.0.0.1: refused and closed.
	c1, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	select {
	case r := <-refused:
		if r.(*net.TCPAddr).IP.String() != "127.0.0.1" {
			t.Errorf("refused %v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("connection from 127.0.0.1 not refused")
	}
	c1.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c1.Read(make([]byte, 1)); err == nil {
		t.Errorf("refused connection readable: %d bytes", n)
	}
	// From 127.0.0.7: accepted.
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.7")}}
	c2, err := d.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("connection from 127.0.0.7 not accepted")
	}
}
