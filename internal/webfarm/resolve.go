package webfarm

import "strings"

// rkind is the kind of resource a URL names.
type rkind uint8

const (
	rNotFound rkind = iota
	rPage           // n
	rRobots
	rSitemap
	rHidden   // n
	rNoFollow // n: the target of nofollow page n
	rRedir    // id, k
	rMeta     // id, k
	rKindLeaf // sub (kindleaf*), id
	rDup      // id, k
	rQuery    // id
	rNear     // id, k
	rFile     // id
	rErr      // id
	rSlow     // n
	rStall
	rBig
	rBigHead
	rBigTail
	rCalMonth // y, m
	rCalDay   // y, m, d
	rDeep     // k
	rDeep2    // k
)

// Leaf resources of FeatLinkKinds: /k/<name>/<id><ext>.
const (
	kArea = iota
	kFrame
	kIframe
	kFrameset
	kLinkHTML
	kLinkCSS
	kImg
	kPic
	kScript
	kStyle
	kEmbed
	kObject
	kComment
	numKleaf
)

var kleafDir = [numKleaf]string{"area", "frame", "iframe", "frameset", "link", "link", "img", "pic",
	"script", "style", "embed", "object", "comment"}
var kleafExt = [numKleaf]string{".html", ".html", ".html", ".html", ".html", ".css", ".png", "",
	".js", "", ".pdf", ".pdf", ".html"}

// res is a parsed request.
type res struct {
	kind       rkind
	h          int
	n, id, k   int
	sub        int
	y, m, d    int
	cycle      int
	path       string // path as requested
	notAllowed bool   // a method other than GET/HEAD
}

// parseNum parses a decimal number without sign or leading zeros, below 1e9.
func parseNum(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// parseFixed parses exactly len(s) digits (leading zeros allowed).
func parseFixed(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	v := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// cut splits s at the first sep.
func cut(s, sep string) (string, string, bool) { return strings.Cut(s, sep) }

// resolve maps a path and query of host h to a resource.
func (f *Farm) resolve(h int, path, query string, cycle int) res {
	r := res{kind: rNotFound, h: h, cycle: cycle, path: path}
	P := f.pages()
	if query != "" {
		if rest, ok := strings.CutPrefix(path, "/q/"); ok && f.has(h, FeatDuplicates) {
			if id, ok := parseNum(rest); ok && f.slotValid(id, offDups) && queryPermOK(query, id) {
				r.kind, r.id = rQuery, id
			}
		}
		return r
	}
	if path == "/" {
		r.kind, r.n = rPage, 0
		return r
	}
	if len(path) < 2 || path[0] != '/' {
		return r
	}
	seg, rest, _ := cut(path[1:], "/")
	switch seg {
	case "robots.txt":
		if rest == "" && !strings.Contains(path[1:], "/") {
			r.kind = rRobots
		}
		return r
	case "sitemap.xml":
		if !strings.Contains(path[1:], "/") && f.has(h, FeatSitemap) {
			r.kind = rSitemap
		}
		return r
	case "hidden":
		if n, ok := numHTML(rest); ok && f.has(h, FeatSitemap) && n < f.hiddenCount() {
			r.kind, r.n = rHidden, n
		}
		return r
	case "nf":
		if n, ok := numHTML(rest); ok && n < P && f.metaRobots(h, n)&2 != 0 {
			r.kind, r.n = rNoFollow, n
		}
		return r
	case "redir":
		f.resolveRedir(&r, h, rest)
		return r
	case "mr":
		f.resolveMeta(&r, h, rest)
		return r
	case "k":
		f.resolveKindLeaf(&r, h, rest)
		return r
	case "dup", "near":
		if !f.has(h, FeatDuplicates) {
			return r
		}
		a, b, ok := cut(rest, "/")
		id, ok1 := parseNum(a)
		k, ok2 := numHTML(b)
		if ok && ok1 && ok2 && k < 3 && f.slotValid(id, offDups) {
			r.kind, r.id, r.k = rDup, id, k
			if seg == "near" {
				r.kind = rNear
			}
		}
		return r
	case "files":
		if !f.has(h, FeatFiles) {
			return r
		}
		num, ext, ok := cut(rest, ".")
		if id, ok1 := parseNum(num); ok && ok1 && f.slotValid(id, offFiles) && ext == fileExts[id%4] {
			r.kind, r.id = rFile, id
		}
		return r
	case "err":
		if !f.has(h, FeatErrors) {
			return r
		}
		a, b, ok := cut(rest, "/")
		code, ok1 := parseNum(a)
		id, ok2 := numHTML(b)
		if ok && ok1 && ok2 && f.slotValid(id, offErrors) && errCodes[id%4] == code {
			r.kind, r.id = rErr, id
		}
		return r
	case "slow":
		if n, ok := numHTML(rest); ok && f.has(h, FeatSlow) && n < 3 {
			r.kind, r.n = rSlow, n
		}
		return r
	case "stall":
		if rest == "0.html" && f.has(h, FeatStall) {
			r.kind = rStall
		}
		return r
	case "big":
		if !f.has(h, FeatLarge) {
			return r
		}
		switch rest {
		case "0.html":
			r.kind = rBig
		case "0/head.html":
			r.kind = rBigHead
		case "0/tail.html":
			r.kind = rBigTail
		}
		return r
	case "cal":
		if !f.has(h, FeatCalendar) {
			return r
		}
		if y, m, ok := parseMonth(rest); ok {
			r.kind, r.y, r.m = rCalMonth, y, m
			return r
		}
		if y, m, d, ok := parseDay(rest); ok {
			r.kind, r.y, r.m, r.d = rCalDay, y, m, d
		}
		return r
	case "deep", "deep2":
		f.resolveDeep(&r, h, seg, path, rest)
		return r
	}
	// An ordinary page: /<topic>/<n>.html.
	n, ok := numHTML(rest)
	if !ok || n < 1 || n >= P || f.topic(h, n) != seg {
		return r
	}
	r.kind, r.n = rPage, n
	return r
}

// resolveRedir resolves a redirect chain, loop or endless redirect: /redir/<id>/h<k>.
func (f *Farm) resolveRedir(r *res, h int, rest string) {
	if !f.has(h, FeatRedirects) {
		return
	}
	a, b, ok := cut(rest, "/")
	id, ok1 := parseNum(a)
	if !ok || !ok1 || !f.slotValid(id, offRedir) || len(b) < 2 || b[0] != 'h' {
		return
	}
	k, ok := parseNum(b[1:])
	if !ok {
		return
	}
	switch redirType(id) {
	case 0, 1:
		ok = k < chainLen(id)
	case 2:
		ok = k < loopLen(id)
	default:
		ok = k < maxEndless
	}
	if ok {
		r.kind, r.id, r.k = rRedir, id, k
	}
}

// resolveMeta resolves a meta refresh page: /mr/<id>/h<k>.html.
func (f *Farm) resolveMeta(r *res, h int, rest string) {
	if !f.has(h, FeatMetaRefresh) {
		return
	}
	a, b, ok := cut(rest, "/")
	id, ok1 := parseNum(a)
	if !ok || !ok1 || !f.slotValid(id, offMeta) || len(b) < 2 || b[0] != 'h' {
		return
	}
	k, ok := numHTML(b[1:])
	if !ok {
		return
	}
	switch metaType(id) {
	case 0:
		ok = k < metaChainLen(id)
	case 1:
		ok = k < 2
	default:
		ok = k == 0
	}
	if ok {
		r.kind, r.id, r.k = rMeta, id, k
	}
}

// resolveKindLeaf resolves a leaf of the link kinds: /k/<dir>/<id><ext>.
func (f *Farm) resolveKindLeaf(r *res, h int, rest string) {
	if !f.has(h, FeatLinkKinds) {
		return
	}
	dir, file, ok := cut(rest, "/")
	if !ok {
		return
	}
	for sub := 0; sub < numKleaf; sub++ {
		if kleafDir[sub] != dir {
			continue
		}
		num, ok := strings.CutSuffix(file, kleafExt[sub])
		if !ok {
			continue
		}
		if id, ok := parseNum(num); ok && f.slotValid(id, offKinds) {
			r.kind, r.sub, r.id = rKindLeaf, sub, id
			return
		}
	}
}

// resolveDeep resolves a deep path: /deep/more/more/.../ or /deep2/a/b/a/b/.../.
func (f *Farm) resolveDeep(r *res, h int, seg, path, rest string) {
	if !f.has(h, FeatDeepPaths) {
		return
	}
	unit := "more/"
	if seg == "deep2" {
		unit = "a/b/"
	}
	k := 0
	for rest != "" {
		var ok bool
		rest, ok = strings.CutPrefix(rest, unit)
		if !ok || k >= maxDeep {
			return
		}
		k++
	}
	if path[len(path)-1] != '/' {
		return
	}
	r.kind, r.k = rDeep, k
	if seg == "deep2" {
		r.kind = rDeep2
	}
}

// numHTML parses "<n>.html".
func numHTML(s string) (int, bool) {
	num, ok := strings.CutSuffix(s, ".html")
	if !ok {
		return 0, false
	}
	return parseNum(num)
}

// Calendar paths: months "YYYY-MM/", days "YYYY-MM-DD.html"; years 1..9999.
func parseMonth(s string) (y, m int, ok bool) {
	if len(s) != 8 || s[4] != '-' || s[7] != '/' {
		return 0, 0, false
	}
	y, ok1 := parseFixed(s[:4])
	m, ok2 := parseFixed(s[5:7])
	if !ok1 || !ok2 || y < 1 || m < 1 || m > 12 {
		return 0, 0, false
	}
	return y, m, true
}

func parseDay(s string) (y, m, d int, ok bool) {
	if len(s) != 15 || s[4] != '-' || s[7] != '-' || s[10:] != ".html" {
		return 0, 0, 0, false
	}
	y, ok1 := parseFixed(s[:4])
	m, ok2 := parseFixed(s[5:7])
	d, ok3 := parseFixed(s[8:10])
	if !ok1 || !ok2 || !ok3 || y < 1 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, 0, 0, false
	}
	return y, m, d, true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// queryPerm returns permutation p (0..2) of the query of /q/<id>.
func queryPerm(b []byte, id, p int) []byte {
	parts := [3]string{"a=", "b=", "c="}
	vals := [3]int{id, id + 1, id + 2}
	order := [3][3]int{{0, 1, 2}, {2, 0, 1}, {1, 2, 0}}[p%3]
	for i, j := range order {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, parts[j]...)
		b = appendInt(b, vals[j])
	}
	return b
}

// queryPermOK accepts any order of the three parameters of /q/<id>.
func queryPermOK(q string, id int) bool {
	want := map[string]bool{"a=" + itoa(id): true, "b=" + itoa(id+1): true, "c=" + itoa(id+2): true}
	parts := strings.Split(q, "&")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if !want[p] {
			return false
		}
		delete(want, p)
	}
	return true
}
