package clustertest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// mirrors are extra sites that serve one page with the same bytes, so that
// a duplicate group spans node schedulers (the farm's duplicates are within
// one site). Each mirror listens on its own 127.2.0.x address.
type mirrors struct {
	mu    sync.Mutex
	hosts []string // mirrorNN.farm.test:port
	log   []mirrorReq
	srv   []*http.Server
}

type mirrorReq struct{ url, remote string }

const mirrorSame = "<html><head><title>Mirrored</title></head><body><p>The same page on every mirror.</p></body></html>\n"

func startMirrors(t testing.TB, n int) *mirrors {
	t.Helper()
	m := &mirrors{}
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.2.0."+strconv.Itoa(i+1)+":0")
		if err != nil {
			t.Fatalf("mirror listener: %v", err)
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		name := fmt.Sprintf("mirror%02d.farm.test", i)
		m.hosts = append(m.hosts, name+":"+port)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.mu.Lock()
			m.log = append(m.log, mirrorReq{url: "http://" + r.Host + r.URL.RequestURI(), remote: r.RemoteAddr})
			m.mu.Unlock()
			switch r.URL.Path {
			case "/":
				w.Header().Set("Content-Type", "text/html")
				// The home pages differ in their text, not only in their
				// titles: a duplicate's links are not followed
				// (extract_links_from_dupes defaults to no).
				fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>Home of %s.</p><a href=\"/same.html\">same</a> <a href=\"/own.html\">own</a></body></html>\n", name, name)
			case "/same.html":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, mirrorSame)
			case "/own.html":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<html><head><title>Own</title></head><body><p>Only on %s.</p></body></html>\n", name)
			default:
				http.NotFound(w, r)
			}
		})}
		m.srv = append(m.srv, srv)
		go srv.Serve(ln)
	}
	t.Cleanup(func() {
		for _, s := range m.srv {
			s.Close()
		}
	})
	return m
}

// startURLs are the mirrors' home pages.
func (m *mirrors) startURLs() []string {
	out := make([]string, len(m.hosts))
	for i, h := range m.hosts {
		out[i] = "http://" + h + "/"
	}
	return out
}

// want is what a crawl fetches from the mirrors.
func (m *mirrors) want() []string {
	var out []string
	for _, h := range m.hosts {
		for _, p := range []string{"/", "/robots.txt", "/same.html", "/own.html"} {
			out = append(out, "http://"+h+p)
		}
	}
	return out
}

func (m *mirrors) requests() []mirrorReq {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]mirrorReq(nil), m.log...)
}

// addToHostsFile appends the mirrors' names to a hosts file.
func (m *mirrors) addToHostsFile(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	for i, h := range m.hosts {
		name, _, _ := strings.Cut(h, ":")
		if _, err := fmt.Fprintf(f, "127.2.0.%d %s\n", i+1, name); err != nil {
			return err
		}
	}
	return nil
}
