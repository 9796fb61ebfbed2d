package webfarm

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Small sites for the crawl options of MS-FSCCFG that need a server shaped
// for them (focused crawl, duplicates with links, mirror sites, sitemap
// change frequencies). Each is an http.Handler with a request log and says
// what a correct crawl of it fetches for a given configuration.

// SiteRequest is one request to one of the option sites.
type SiteRequest struct {
	Host      string // Host header without the port, lower-cased
	Path      string
	UserAgent string
}

// siteLog is the request log of an option site.
type siteLog struct {
	mu  sync.Mutex
	log []SiteRequest
}

func (l *siteLog) add(r *http.Request) {
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	l.mu.Lock()
	l.log = append(l.log, SiteRequest{Host: strings.ToLower(h), Path: r.URL.Path, UserAgent: r.UserAgent()})
	l.mu.Unlock()
}

// Requests returns the request log.
func (l *siteLog) Requests() []SiteRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]SiteRequest(nil), l.log...)
}

// Paths is the sorted set of paths requested (robots.txt included).
func (l *siteLog) Paths() []string {
	set := map[string]bool{}
	for _, r := range l.Requests() {
		set[r.Path] = true
	}
	return sortedSet(set)
}

// Count returns how many times path was requested.
func (l *siteLog) Count(path string) int {
	n := 0
	for _, r := range l.Requests() {
		if r.Path == path {
			n++
		}
	}
	return n
}

func sortedSet(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func serveRobots(w http.ResponseWriter, extra string) {
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "User-agent: *\nDisallow:\n"+extra)
}

func htmlHead(w http.ResponseWriter, title string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>%s</title></head><body>\n", title)
}

// --- focused crawl ---

// LangSite is a site whose pages are written in English, German, French
// and Norwegian, for the focused crawl (focused/languages, focused/depth).
// The pages form a tree: "/" (page 0) and /p/<n>.html for 1 <= n < Pages;
// page n links to pages 4n+1..4n+4. The language of each page is
// LangOf(n); the text is running prose in that language, and nothing in
// the markup names the language (no lang attribute), so a crawler has to
// read the text.
type LangSite struct {
	Pages int
	siteLog
}

// LangCodes are the ISO 639-1 codes of the site's languages.
var LangCodes = []string{"en", "de", "fr", "no"}

// LangOf is the language of page n.
func LangOf(n int) string {
	if n == 0 {
		return "en"
	}
	return LangCodes[(n*5+n/4)%4]
}

// LangPath is the path of page n.
func LangPath(n int) string {
	if n == 0 {
		return "/"
	}
	return "/p/" + strconv.Itoa(n) + ".html"
}

func (s *LangSite) children(n int) []int {
	var out []int
	for c := 4*n + 1; c <= 4*n+4 && c < s.Pages; c++ {
		out = append(out, c)
	}
	return out
}

// ExpectFocused is what a focused crawl of the site from "/" does with
// languages and depth: fetched are the pages it requests (robots.txt not
// included), kept the pages it keeps (those in one of the languages). A
// page in another language is fetched but not kept, and the links of such
// a page are followed only while the path since the last page in one of
// the languages has at most depth pages in other languages (depth 0: the
// links of other-language pages are never followed). With no languages
// every page is kept and followed.
func (s *LangSite) ExpectFocused(languages []string, depth int) (fetched, kept []string) {
	want := map[string]bool{}
	for _, l := range languages {
		want[l] = true
	}
	type item struct{ n, off int }
	queue := []item{{0, 0}}
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		fetched = append(fetched, LangPath(it.n))
		off := 0
		if len(want) > 0 && !want[LangOf(it.n)] {
			off = it.off + 1
		} else {
			kept = append(kept, LangPath(it.n))
		}
		if off > depth {
			continue
		}
		for _, c := range s.children(it.n) {
			queue = append(queue, item{c, off})
		}
	}
	sort.Strings(fetched)
	sort.Strings(kept)
	return fetched, kept
}

// ServeHTTP serves the site.
func (s *LangSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.add(r)
	if r.URL.Path == "/robots.txt" {
		serveRobots(w, "")
		return
	}
	n := -1
	if r.URL.Path == "/" {
		n = 0
	} else if v, ok := numHTML(strings.TrimPrefix(r.URL.Path, "/p/")); ok && strings.HasPrefix(r.URL.Path, "/p/") && v > 0 && v < s.Pages {
		n = v
	}
	if n < 0 {
		http.NotFound(w, r)
		return
	}
	lang := LangOf(n)
	pool := langText[lang]
	htmlHead(w, strings.SplitN(pool[n%len(pool)], ",", 2)[0])
	for i := 0; i < 4; i++ {
		fmt.Fprintf(w, "<p>%s</p>\n", pool[(n*3+i)%len(pool)])
	}
	fmt.Fprintf(w, "<p>%d</p>\n", n) // every page its own text, none a duplicate
	for _, c := range s.children(n) {
		fmt.Fprintf(w, "<a href=\"%s\">%d</a>\n", LangPath(c), c)
	}
	io.WriteString(w, "</body></html>\n")
}

// langText holds sentences of running prose per language, written for the
// farm.
var langText = map[string][]string{
	"en": {
		"The library on the corner of the square has been open every day since the winter of the great storm.",
		"When the engineers came back from the mountain, they said that the bridge would have to be built again.",
		"Most of the people who live in the valley work in the town, and they take the early train to get there.",
		"It was not the first time that the committee had to decide what should be done with the old harbour.",
		"There are two ways to reach the island, and both of them depend on the weather and the tide.",
		"If you want to know more about the history of the region, you can ask at the office by the station.",
		"She wrote that the new system would make it easier for all of us to find what we are looking for.",
		"They have been working on this project for many years, but the results are only now becoming clear.",
	},
	"de": {
		"Die Bibliothek an der Ecke des Platzes ist seit dem Winter des großen Sturms jeden Tag geöffnet.",
		"Als die Ingenieure aus den Bergen zurückkamen, sagten sie, dass die Brücke noch einmal gebaut werden muss.",
		"Die meisten Menschen, die im Tal wohnen, arbeiten in der Stadt und nehmen den frühen Zug, um dorthin zu kommen.",
		"Es war nicht das erste Mal, dass der Ausschuss über die Zukunft des alten Hafens entscheiden musste.",
		"Es gibt zwei Wege auf die Insel, und beide hängen von dem Wetter und von den Gezeiten ab.",
		"Wer mehr über die Geschichte der Region wissen will, kann sich im Büro am Bahnhof erkundigen.",
		"Sie schrieb, dass das neue System es für uns alle leichter machen wird, das zu finden, was wir suchen.",
		"Sie arbeiten seit vielen Jahren an diesem Projekt, aber die Ergebnisse werden erst jetzt sichtbar.",
	},
	"fr": {
		"La bibliothèque au coin de la place est ouverte tous les jours depuis l'hiver de la grande tempête.",
		"Quand les ingénieurs sont revenus de la montagne, ils ont dit que le pont devait être reconstruit.",
		"La plupart des gens qui vivent dans la vallée travaillent en ville et prennent le premier train pour y aller.",
		"Ce n'était pas la première fois que le comité devait décider de ce qu'il fallait faire du vieux port.",
		"Il y a deux façons de rejoindre l'île, et toutes les deux dépendent du temps et de la marée.",
		"Si vous voulez en savoir plus sur l'histoire de la région, vous pouvez demander au bureau près de la gare.",
		"Elle a écrit que le nouveau système nous permettrait à tous de trouver plus facilement ce que nous cherchons.",
		"Ils travaillent sur ce projet depuis des années, mais les résultats ne sont visibles que maintenant.",
	},
	"no": {
		"Biblioteket på hjørnet av torget har vært åpent hver dag siden vinteren med den store stormen.",
		"Da ingeniørene kom tilbake fra fjellet, sa de at brua måtte bygges på nytt.",
		"De fleste som bor i dalen, jobber i byen, og de tar det første toget for å komme dit.",
		"Det var ikke første gang at utvalget måtte bestemme hva som skulle skje med den gamle havna.",
		"Det er to måter å komme seg ut til øya på, og begge avhenger av været og tidevannet.",
		"Hvis du vil vite mer om historien til regionen, kan du spørre på kontoret ved stasjonen.",
		"Hun skrev at det nye systemet ville gjøre det lettere for oss alle å finne det vi leter etter.",
		"De har jobbet med dette prosjektet i mange år, men resultatene blir først nå synlige.",
	},
}

// LangSample returns a paragraph of the site's prose in language code
// ("" for an unknown code): the detector's test material.
func LangSample(code string, n int) string {
	pool := langText[code]
	if len(pool) == 0 {
		return ""
	}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(pool[i%len(pool)])
		b.WriteByte(' ')
	}
	return b.String()
}

// --- exact duplicates that carry links ---

// DupSite has Groups pairs of exact duplicates whose links are relative, so
// that each copy links to pages of its own directory: /d/<g>/a/page.html
// (linked from "/", one hop) and /d/<g>/b/page.html (reached through
// /d/<g>/m1.html and /d/<g>/m2.html, three hops) are the same bytes, each
// linking to child.html of its own directory. /d/<g>/b/child.html is
// reachable only through the second copy. With one fetch at a time per site
// (max_pending 1) the a copy is always fetched first, so the b copy is the
// duplicate.
type DupSite struct {
	Groups int
	siteLog
}

// ExpectDupes is the sorted set of paths a crawl from "/" fetches (robots.txt
// included) with or without extract_links_from_dupes.
func (s *DupSite) ExpectDupes(extractFromDupes bool) []string {
	out := []string{"/", "/robots.txt"}
	for g := 0; g < s.Groups; g++ {
		p := "/d/" + strconv.Itoa(g)
		out = append(out, p+"/a/page.html", p+"/a/child.html", p+"/m1.html", p+"/m2.html", p+"/b/page.html")
		if extractFromDupes {
			out = append(out, p+"/b/child.html")
		}
	}
	sort.Strings(out)
	return out
}

// DupCopies returns the paths of the two copies of group g.
func DupCopies(g int) (first, dup string) {
	p := "/d/" + strconv.Itoa(g)
	return p + "/a/page.html", p + "/b/page.html"
}

// ServeHTTP serves the site.
func (s *DupSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.add(r)
	p := r.URL.Path
	if p == "/robots.txt" {
		serveRobots(w, "")
		return
	}
	if p == "/" {
		htmlHead(w, "Duplicates")
		for g := 0; g < s.Groups; g++ {
			fmt.Fprintf(w, "<a href=\"/d/%d/a/page.html\">copy</a> <a href=\"/d/%d/m1.html\">more</a>\n", g, g)
		}
		io.WriteString(w, "</body></html>\n")
		return
	}
	rest, ok := strings.CutPrefix(p, "/d/")
	gs, leaf, ok2 := strings.Cut(rest, "/")
	g, err := strconv.Atoi(gs)
	if !ok || !ok2 || err != nil || g < 0 || g >= s.Groups || strconv.Itoa(g) != gs {
		http.NotFound(w, r)
		return
	}
	switch leaf {
	case "m1.html":
		htmlHead(w, "Way round "+gs)
		fmt.Fprintf(w, "<p>On the way to the second copy of group %d.</p><a href=\"m2.html\">on</a></body></html>\n", g)
	case "m2.html":
		htmlHead(w, "Way round, further "+gs)
		fmt.Fprintf(w, "<p>Almost at the second copy of group %d.</p><a href=\"b/page.html\">copy</a></body></html>\n", g)
	case "a/page.html", "b/page.html":
		// The same bytes under both names.
		htmlHead(w, "Shared page "+gs)
		fmt.Fprintf(w, "<p>This text of group %d is published under two addresses.</p><a href=\"child.html\">child</a></body></html>\n", g)
	case "a/child.html", "b/child.html":
		htmlHead(w, "Child "+leaf)
		fmt.Fprintf(w, "<p>Child page %s of group %d, different in each directory.</p></body></html>\n", leaf, g)
	default:
		http.NotFound(w, r)
	}
}

// --- mirror sites ---

// MirrorSite serves the same content under every host name: Primary and
// Mirrors (mirror_site_files). Its pages are "/" and /m/<n>.html for
// 0 <= n < Pages; "/" links to page 0, page n to pages 2n+1 and 2n+2, each
// link absolute and naming the host HostFor(child): most links go to a
// mirror. A crawl that treats the mirrors as the site itself fetches every
// page once, from Primary only.
type MirrorSite struct {
	Primary string
	Mirrors []string
	Pages   int
	siteLog
}

// HostFor is the host name the links to page n use.
func (s *MirrorSite) HostFor(n int) string {
	names := append([]string{s.Primary}, s.Mirrors...)
	return names[(n*7+3)%len(names)]
}

// AllPaths is every page of the site, sorted, robots.txt included.
func (s *MirrorSite) AllPaths() []string {
	out := []string{"/", "/robots.txt"}
	for n := 0; n < s.Pages; n++ {
		out = append(out, "/m/"+strconv.Itoa(n)+".html")
	}
	sort.Strings(out)
	return out
}

// Hosts is the sorted set of host names requests came for.
func (s *MirrorSite) Hosts() []string {
	set := map[string]bool{}
	for _, r := range s.Requests() {
		set[r.Host] = true
	}
	return sortedSet(set)
}

// ServeHTTP serves the site.
func (s *MirrorSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.add(r)
	p := r.URL.Path
	if p == "/robots.txt" {
		serveRobots(w, "")
		return
	}
	port := ""
	if _, pt, err := net.SplitHostPort(r.Host); err == nil {
		port = ":" + pt
	}
	link := func(n int) {
		fmt.Fprintf(w, "<a href=\"http://%s%s/m/%d.html\">page %d</a>\n", s.HostFor(n), port, n, n)
	}
	if p == "/" {
		htmlHead(w, "Mirrored site")
		if s.Pages > 0 {
			link(0)
		}
		io.WriteString(w, "</body></html>\n")
		return
	}
	v, ok := numHTML(strings.TrimPrefix(p, "/m/"))
	if !strings.HasPrefix(p, "/m/") || !ok || v < 0 || v >= s.Pages {
		http.NotFound(w, r)
		return
	}
	htmlHead(w, "Mirrored page "+strconv.Itoa(v))
	fmt.Fprintf(w, "<p>Page %d, the same on every mirror.</p>\n", v)
	for _, c := range []int{2*v + 1, 2*v + 2} {
		if c < s.Pages {
			link(c)
		}
	}
	io.WriteString(w, "</body></html>\n")
}

// --- sitemap change frequencies ---

// ChangeSite has Pages pages /c/<n>.html, all linked from "/", listed in
// /sitemap.xml (named by robots.txt) with the change frequency
// ChangeFreqOf(n). The pages whose change frequency is "always" change in
// every cycle (SetCycle).
type ChangeSite struct {
	Pages int
	cycle atomic.Int64
	siteLog
}

// ChangeFreqs are the change frequencies the pages cycle through.
var ChangeFreqs = []string{"always", "daily", "monthly", "never"}

// ChangeFreqOf is the sitemap changefreq of page n.
func ChangeFreqOf(n int) string { return ChangeFreqs[n%len(ChangeFreqs)] }

// ChangePath is the path of page n.
func ChangePath(n int) string { return "/c/" + strconv.Itoa(n) + ".html" }

// SetCycle sets the refresh cycle the content is in.
func (s *ChangeSite) SetCycle(c int) { s.cycle.Store(int64(c)) }

// ServeHTTP serves the site.
func (s *ChangeSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.add(r)
	base := "http://" + r.Host
	switch p := r.URL.Path; {
	case p == "/robots.txt":
		serveRobots(w, "Sitemap: "+base+"/sitemap.xml\n")
	case p == "/sitemap.xml":
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+"\n")
		for n := 0; n < s.Pages; n++ {
			fmt.Fprintf(w, "<url><loc>%s%s</loc><changefreq>%s</changefreq></url>\n", base, ChangePath(n), ChangeFreqOf(n))
		}
		io.WriteString(w, "</urlset>\n")
	case p == "/":
		htmlHead(w, "Changing pages")
		for n := 0; n < s.Pages; n++ {
			fmt.Fprintf(w, "<a href=\"%s\">%d</a>\n", ChangePath(n), n)
		}
		io.WriteString(w, "</body></html>\n")
	default:
		v, ok := numHTML(strings.TrimPrefix(p, "/c/"))
		if !strings.HasPrefix(p, "/c/") || !ok || v < 0 || v >= s.Pages {
			http.NotFound(w, r)
			return
		}
		version := 0
		if ChangeFreqOf(v) == "always" {
			version = int(s.cycle.Load())
		}
		htmlHead(w, "Page "+strconv.Itoa(v))
		fmt.Fprintf(w, "<p>Page %d changes %s; this is version %d.</p></body></html>\n", v, ChangeFreqOf(v), version)
	}
}
