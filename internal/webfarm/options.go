package webfarm

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
)

// OptionsSite is a small site for the crawl options that shape a request
// or refuse its answer (MS-FSCCFG exclude_headers and post_payload):
//
//   - "/" links to /doc/public.html, /doc/private.html, /doc/internal.html
//     and /search;
//   - /doc/<name>.html answers with the header "X-Classification: <name>",
//     and links to /doc/<name>-child.html (a page only a crawl that read
//     the body of its parent can find);
//   - /search answers 200 with links to /results/1.html and
//     /results/2.html only to a POST whose form-encoded body is exactly
//     Payload; a GET gets 405, another body 400.
//
// Every request is logged (method, path, and whether a POST carried the
// payload).
type OptionsSite struct {
	// Payload is the body /search wants (default "q=widgets&page=1").
	Payload string

	mu  sync.Mutex
	log []OptionsRequest
}

// OptionsRequest is one request to an OptionsSite.
type OptionsRequest struct {
	Method, Path string
	Status       int
}

// Requests returns the request log.
func (s *OptionsSite) Requests() []OptionsRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]OptionsRequest(nil), s.log...)
}

// Served lists the sorted set of "METHOD path" answered with 200.
func (s *OptionsSite) Served() []string {
	set := map[string]bool{}
	for _, r := range s.Requests() {
		if r.Status == http.StatusOK {
			set[r.Method+" "+r.Path] = true
		}
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func (s *OptionsSite) payload() string {
	if s.Payload == "" {
		return "q=widgets&page=1"
	}
	return s.Payload
}

// ServeHTTP serves the site.
func (s *OptionsSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status := s.serve(w, r)
	s.mu.Lock()
	if len(s.log) < 100000 {
		s.log = append(s.log, OptionsRequest{Method: r.Method, Path: r.URL.Path, Status: status})
	}
	s.mu.Unlock()
}

func (s *OptionsSite) serve(w http.ResponseWriter, r *http.Request) int {
	page := func(title string, links ...string) int {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%s</title></head><body><p>%s</p>\n", title, title)
		for _, l := range links {
			fmt.Fprintf(w, "<a href=\"%s\">%s</a>\n", l, l)
		}
		io.WriteString(w, "</body></html>\n")
		return http.StatusOK
	}
	p := r.URL.Path
	switch {
	case p == "/robots.txt":
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "User-agent: *\nDisallow:\n")
		return http.StatusOK
	case p == "/":
		return page("options", "/doc/public.html", "/doc/private.html", "/doc/internal.html", "/search")
	case p == "/search":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "POST the search form", http.StatusMethodNotAllowed)
			return http.StatusMethodNotAllowed
		}
		b, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		ct := r.Header.Get("Content-Type")
		if err != nil || string(b) != s.payload() || !strings.HasPrefix(ct, "application/x-www-form-urlencoded") {
			http.Error(w, "bad search form", http.StatusBadRequest)
			return http.StatusBadRequest
		}
		return page("results", "/results/1.html", "/results/2.html")
	case strings.HasPrefix(p, "/results/") && strings.HasSuffix(p, ".html"):
		return page("result " + strings.TrimSuffix(strings.TrimPrefix(p, "/results/"), ".html"))
	case strings.HasPrefix(p, "/doc/") && strings.HasSuffix(p, ".html"):
		name := strings.TrimSuffix(strings.TrimPrefix(p, "/doc/"), ".html")
		if strings.ContainsAny(name, "/\r\n") || name == "" {
			break
		}
		w.Header().Set("X-Classification", name)
		if strings.HasSuffix(name, "-child") {
			return page(name)
		}
		return page(name, "/doc/"+name+"-child.html")
	}
	http.NotFound(w, r)
	return http.StatusNotFound
}
