package webfarm

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strconv"
)

// Target paths.

// doc describes a rendered response.
type doc struct {
	status     int
	ctype      string
	location   string // Location header as sent
	locURL     string // Location resolved (collect only)
	version    int    // validators' version; -1 for none
	retryAfter int
	noindex    bool
	nofollow   bool
	size       int64 // body size of streamed bodies
}

const (
	ctHTML = "text/html; charset=utf-8"
	ctText = "text/plain; charset=utf-8"
)

// render renders r's body into g.buf (for rBig only the head) and
// describes the response.
func (f *Farm) render(g *gen, r *res) doc {
	h, c := r.h, r.cycle
	d := doc{status: 200, ctype: ctHTML, version: 0}
	switch r.kind {
	case rPage:
		if !f.born(h, r.n, c) {
			return f.renderError(g, 404)
		}
		if f.dead(h, r.n, c) {
			return f.renderError(g, f.goneStatus(h, r.n))
		}
		mr := f.metaRobots(h, r.n)
		d.noindex, d.nofollow = mr&1 != 0, mr&2 != 0
		d.version = f.renderPage(g, h, r.n, c)
	case rRobots:
		return f.renderRobots(g, h)
	case rSitemap:
		d.ctype = "application/xml"
		if f.has(h, FeatChanges) {
			d.version = min(c, maxChangeCycle)
		}
		f.renderSitemap(g, h, c)
	case rHidden:
		g.seedText(rHidden, r.n, 0)
		f.leaf(g, 1, func() {
			g.tpPage(h, int(hash(f.seed, saltHidden, h, r.n, 0)%uint64(f.pages())))
			g.s("<p>")
			g.a(h, 0, 3)
			g.s("</p>\n")
		})
	case rNoFollow:
		g.seedText(rNoFollow, r.n, 0)
		f.leaf(g, 1, nil)
	case rRedir:
		return f.renderRedirect(g, r)
	case rMeta:
		f.renderMeta(g, r)
	case rKindLeaf:
		return f.renderKindLeaf(g, r)
	case rDup, rQuery:
		g.seedText(rDup, r.id, 0)
		f.leaf(g, -1, nil)
	case rNear:
		g.seedText(rNear, r.id, 0)
		t := g.title(5)
		g.head(t)
		g.s("</head>\n<body>\n<h1>")
		g.buf = append(g.buf, t...)
		g.s("</h1>\n<p>")
		g.sentences(12, r.k)
		g.s("</p>\n</body>\n</html>\n")
	case rFile:
		return f.renderFile(g, r)
	case rErr:
		d = f.renderError(g, errCodes[r.id%4])
		if d.status == 503 {
			d.retryAfter = 120
		}
		return d
	case rSlow:
		g.seedText(rSlow, r.n, 0)
		f.leaf(g, -1, nil)
		d.version = -1
	case rStall:
		g.s("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<title>")
		d.version = -1
	case rBig:
		d.size = f.cfg.LargeBytes
		g.seedText(rBig, 0, 0)
		f.bigHead(g)
	case rBigHead, rBigTail:
		g.seedText(r.kind, 0, 0)
		f.leaf(g, 0, nil)
	case rCalMonth, rCalDay:
		f.renderCalendar(g, r)
	case rDeep, rDeep2:
		g.seedText(r.kind, r.k, 0)
		t := g.title(3)
		g.head(t)
		g.s("</head>\n<body>\n<h1>")
		g.buf = append(g.buf, t...)
		g.s("</h1>\n")
		g.para(2)
		unit := "more/"
		if r.kind == rDeep2 {
			unit = "a/b/"
		}
		if r.k+1 < maxDeep {
			// The target path, for the record, is this path plus the unit.
			g.tp = append(g.tp[:0], r.path...)
			g.tp = append(g.tp, unit...)
			g.s(`<p><a href="`)
			g.s(unit)
			g.s(`">`)
			g.mark(KindA, h, 0)
			g.words(2)
			g.s("</a></p>\n")
		}
		g.tpPage(h, 0)
		g.s("<p>")
		g.a(h, 0, 1)
		g.s("</p>\n</body>\n</html>\n")
	default:
		return f.renderError(g, 404)
	}
	return d
}

// leaf renders a small page: title, text, an optional extra block and
// (when homeLink >= 0) a link to the home page.
func (f *Farm) leaf(g *gen, homeLink int, extra func()) {
	t := g.title(4)
	g.head(t)
	g.s("</head>\n<body>\n<h1>")
	g.buf = append(g.buf, t...)
	g.s("</h1>\n")
	g.para(4 + g.rng.intn(4))
	if extra != nil {
		extra()
	}
	if homeLink >= 0 {
		g.tpPage(g.h, 0)
		g.s("<p>")
		g.a(g.h, homeLink, 1)
		g.s("</p>\n")
	}
	g.s("</body>\n</html>\n")
}

func (f *Farm) renderError(g *gen, status int) doc {
	g.buf = g.buf[:0]
	g.links = g.links[:0]
	txt := "Not Found"
	switch status {
	case 410:
		txt = "Gone"
	case 401:
		txt = "Unauthorized"
	case 403:
		txt = "Forbidden"
	case 500:
		txt = "Internal Server Error"
	case 503:
		txt = "Service Unavailable"
	}
	g.s("<!DOCTYPE html>\n<html><head><title>")
	g.num(status)
	g.s(" ")
	g.s(txt)
	g.s("</title></head>\n<body><h1>")
	g.s(txt)
	g.s("</h1></body></html>\n")
	return doc{status: status, ctype: ctHTML, version: -1}
}

// renderPage renders ordinary page n and returns its version: the last
// cycle in which its bytes changed.
func (f *Farm) renderPage(g *gen, h, n, c int) int {
	P := f.pages()
	tv := f.textVersion(h, n, c)
	g.seedText(rPage, n, tv)
	linkSeq := 0
	form := func() int {
		linkSeq++
		return int(hash(f.seed, saltHref, h, n, linkSeq) % 7)
	}
	var topic string
	if n > 0 {
		topic = f.topic(h, n)
		g.dir = "/" + topic + "/"
	}
	mr := f.metaRobots(h, n)
	_, isBase := slot(n, offBase)
	isBase = isBase && f.has(h, FeatBase)
	kindID, hasKinds := slot(n, offKinds)
	hasKinds = hasKinds && f.has(h, FeatLinkKinds)

	t := g.title(3 + g.rng.intn(4))
	g.head(t)
	switch mr {
	case 1:
		g.s("<meta name=\"robots\" content=\"noindex\">\n")
	case 2:
		g.s("<meta name=\"ROBOTS\" content=\"NOFOLLOW\">\n")
	case 3:
		g.s("<meta name=\"robots\" content=\"noindex, nofollow\">\n")
	}
	if isBase {
		shift := int(hash(f.seed, saltTopic, h, n, 1)%uint64(len(topics)-1)) + 1
		bt := topics[(shift+indexOf(topics, topic))%len(topics)]
		g.dir = "/" + bt + "/"
		g.tpStr(g.dir)
		g.s(`<base href="`)
		g.href(h, 1)
		g.s("\">\n")
	}
	if hasKinds {
		g.tpNum("/k/link/", kindID, ".css")
		g.s(`<link rel="stylesheet" href="`)
		g.href(h, 0)
		g.s(`">`)
		g.mark(KindLink, h, 0)
		g.tpNum("/k/link/", kindID, ".html")
		g.s("\n<link rel=\"alternate\" type=\"text/html\" href=\"")
		g.href(h, 0)
		g.s(`">`)
		g.mark(KindLink, h, 0)
		g.tpNum("/k/script/", kindID, ".js")
		g.s("\n<script src=\"")
		g.href(h, 0)
		g.s(`">`)
		g.mark(KindScript, h, 0)
		g.s("</script>\n<style>\n@import url(\"")
		g.tpNum("/k/style/", kindID, "")
		g.href(h, 0)
		g.s(`");`)
		g.mark(KindStyle, h, 0)
		g.s("\nbody { font-family: serif; }\n</style>\n")
	}
	g.s("</head>\n<body>\n<h1>")
	g.buf = append(g.buf, t...)
	g.s("</h1>\n")
	g.para(3 + g.rng.intn(3))
	g.s("<h2>")
	g.capWords(2 + g.rng.intn(3))
	g.s("</h2>\n<ul>\n")
	version := tv
	linkPage := func(hh, t int) {
		if !f.born(hh, t, c) {
			return
		}
		version = max(version, f.bornCycle(hh, t))
		g.tpPage(hh, t)
		fm := form()
		if isBase && hh == h {
			fm = 2
		}
		g.li(hh, fm)
	}
	for i := 1; i <= fanout; i++ {
		if t := n*fanout + i; t < P {
			linkPage(h, t)
		}
	}
	for i := 0; i < randomLinks; i++ {
		if t := f.randomTarget(h, n, i); t != n {
			linkPage(h, t)
		}
	}
	g.s("</ul>\n")
	g.para(2 + g.rng.intn(3))
	if f.has(h, FeatCrossLinks) {
		if len(f.hosts) > 1 {
			g.s("<h2>Elsewhere</h2>\n<ul>\n")
			for i := 0; i < crossLinks; i++ {
				linkPage(f.crossTarget(h, n, i))
			}
			g.s("</ul>\n")
		}
		switch hash(f.seed, saltExternal, h, n, 0) % 8 {
		case 0:
			g.tpStr("http://www.outside.invalid/", g.word(), ".html")
			g.s("<p>")
			g.a(-1, 0, 2)
			g.s("</p>\n")
		case 1:
			g.s("<p><a href=\"mailto:webmaster@")
			g.s(f.hosts[h].name)
			g.s("\">Write to us</a> or <a href=\"javascript:void(0)\">open the menu</a>.</p>\n")
		}
	}
	f.renderSlots(g, h, n, kindID, hasKinds, mr)
	if n == 0 {
		f.renderHomeExtras(g, h)
	}
	g.tpPage(h, 0)
	g.s("<p class=\"nav\">")
	g.a(h, 0, 1)
	g.s("</p>\n</body>\n</html>\n")
	return version
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return 0
}

func (f *Farm) renderSlots(g *gen, h, n, kindID int, hasKinds bool, mr int) {
	if id, ok := slot(n, offRedir); ok && f.has(h, FeatRedirects) {
		g.tpNum("/redir/", id, "/h0")
		g.s("<p>")
		g.words(3)
		g.s(" ")
		g.a(h, 0, 2)
		g.s(".</p>\n")
	}
	if id, ok := slot(n, offMeta); ok && f.has(h, FeatMetaRefresh) {
		g.tpNum("/mr/", id, "/h0.html")
		g.s("<p>")
		g.a(h, 0, 3)
		g.s("</p>\n")
	}
	if hasKinds {
		id := kindID
		g.tpNum("/k/img/", id, ".png")
		g.s("<p><img src=\"")
		g.href(h, 0)
		g.s("\" alt=\"")
		g.words(2)
		g.s("\" usemap=\"#m")
		g.num(id)
		g.s(`">`)
		g.mark(KindImg, h, 0)
		g.tpNum("/k/pic/", id, "")
		g.s(" <img src=\"")
		g.href(h, 0)
		g.s("\" alt=\"picture\">")
		g.mark(KindImg, h, 0)
		g.s("</p>\n<map name=\"m")
		g.num(id)
		g.s("\">")
		g.tpNum("/k/area/", id, ".html")
		g.s("<area shape=\"rect\" coords=\"0,0,8,8\" href=\"")
		g.href(h, 0)
		g.s("\" alt=\"")
		g.words(1)
		g.s(`">`)
		g.mark(KindArea, h, 0)
		g.s("</map>\n")
		g.tpNum("/k/iframe/", id, ".html")
		g.s("<iframe src=\"")
		g.href(h, 0)
		g.s("\" title=\"frame\">")
		g.mark(KindFrame, h, 0)
		g.s("</iframe>\n<p>")
		g.tpNum("/k/frameset/", id, ".html")
		g.a(h, 0, 2)
		g.s("</p>\n")
		g.tpNum("/k/embed/", id, ".pdf")
		g.s("<embed src=\"")
		g.href(h, 0)
		g.s("\" type=\"application/pdf\">")
		g.mark(KindEmbed, h, 0)
		g.tpNum("/k/object/", id, ".pdf")
		g.s("\n<object data=\"")
		g.href(h, 0)
		g.s("\" type=\"application/pdf\">")
		g.mark(KindObject, h, 0)
		g.s("</object>\n")
		g.tpNum("/k/comment/", id, ".html")
		g.s("<!-- moved to ")
		g.href(h, 1)
		g.s(" -->")
		g.mark(KindComment, h, 0)
		g.s("\n")
	}
	if id, ok := slot(n, offDups); ok && f.has(h, FeatDuplicates) {
		g.s("<ul class=\"copies\">\n")
		for k := 0; k < 3; k++ {
			g.tpNum("/dup/", id, "/")
			g.tp = appendInt(g.tp, k)
			g.tp = append(g.tp, ".html"...)
			g.li(h, k)
		}
		for p := 0; p < 3; p++ {
			g.tpNum("/q/", id, "?")
			g.tp = queryPerm(g.tp, id, p)
			g.li(h, p)
		}
		for k := 0; k < 3; k++ {
			g.tpNum("/near/", id, "/")
			g.tp = appendInt(g.tp, k)
			g.tp = append(g.tp, ".html"...)
			g.li(h, 0)
		}
		g.s("</ul>\n")
	}
	if id, ok := slot(n, offFiles); ok && f.has(h, FeatFiles) {
		g.tpNum("/files/", id, ".")
		g.tp = append(g.tp, fileExts[id%4]...)
		g.s("<p>Download: ")
		g.a(h, 0, 2)
		g.s("</p>\n")
	}
	if id, ok := slot(n, offErrors); ok && f.has(h, FeatErrors) {
		g.tpNum("/err/", errCodes[id%4], "/")
		g.tp = appendInt(g.tp, id)
		g.tp = append(g.tp, ".html"...)
		g.s("<p>")
		g.a(h, 0, 2)
		g.s("</p>\n")
	}
	if mr&2 != 0 {
		g.tpNum("/nf/", n, ".html")
		g.s("<p>")
		g.a(h, 0, 2)
		g.s("</p>\n")
	}
}

func (f *Farm) renderHomeExtras(g *gen, h int) {
	g.s("<ul class=\"more\">\n")
	if f.has(h, FeatCalendar) {
		cs := f.cfg.CalendarStart
		g.tp = appendMonthPath(g.tp[:0], cs.Year(), int(cs.Month()))
		g.li(h, 0)
	}
	if f.has(h, FeatDeepPaths) {
		g.tpStr("/deep/")
		g.li(h, 0)
		g.tpStr("/deep2/")
		g.li(h, 0)
	}
	if f.has(h, FeatSlow) {
		for i := 0; i < 3; i++ {
			g.tpNum("/slow/", i, ".html")
			g.li(h, 0)
		}
	}
	if f.has(h, FeatStall) {
		g.tpStr("/stall/0.html")
		g.li(h, 0)
	}
	if f.has(h, FeatLarge) {
		g.tpStr("/big/0.html")
		g.li(h, 0)
	}
	g.s("</ul>\n")
}

func appendMonthPath(b []byte, y, m int) []byte {
	b = append(b, "/cal/"...)
	b = append4(b, y)
	b = append(b, '-')
	b = append2(b, m)
	return append(b, '/')
}

func appendDayPath(b []byte, y, m, d int) []byte {
	b = append(b, "/cal/"...)
	b = append4(b, y)
	b = append(b, '-')
	b = append2(b, m)
	b = append(b, '-')
	b = append2(b, d)
	return append(b, ".html"...)
}

func append4(b []byte, v int) []byte {
	return append(b, byte('0'+v/1000%10), byte('0'+v/100%10), byte('0'+v/10%10), byte('0'+v%10))
}

func append2(b []byte, v int) []byte { return append(b, byte('0'+v/10%10), byte('0'+v%10)) }

func (f *Farm) renderCalendar(g *gen, r *res) {
	h := r.h
	g.seedText(r.kind, r.y*100+r.m, r.d)
	g.s("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Calendar ")
	g.buf = append4(g.buf, r.y)
	g.s("-")
	g.buf = append2(g.buf, r.m)
	if r.kind == rCalDay {
		g.s("-")
		g.buf = append2(g.buf, r.d)
	}
	g.s("</title>\n</head>\n<body>\n")
	g.para(2)
	g.s("<ul>\n")
	if r.kind == rCalMonth {
		py, pm := r.y, r.m-1
		if pm == 0 {
			py, pm = py-1, 12
		}
		ny, nm := r.y, r.m+1
		if nm == 13 {
			ny, nm = ny+1, 1
		}
		if py >= 1 {
			g.tp = appendMonthPath(g.tp[:0], py, pm)
			g.li(h, 0)
		}
		if ny <= 9999 {
			g.tp = appendMonthPath(g.tp[:0], ny, nm)
			g.li(h, 0)
		}
		for d := 1; d <= daysIn(r.y, r.m); d++ {
			g.tp = appendDayPath(g.tp[:0], r.y, r.m, d)
			g.li(h, 0)
		}
	} else {
		g.dir = "/cal/"
		g.tp = appendMonthPath(g.tp[:0], r.y, r.m)
		g.li(h, 2)
		py, pm, pd := r.y, r.m, r.d-1
		if pd == 0 {
			pm--
			if pm == 0 {
				py, pm = py-1, 12
			}
			pd = daysIn(max(py, 1), pm)
		}
		ny, nm, nd := r.y, r.m, r.d+1
		if nd > daysIn(r.y, r.m) {
			nd, nm = 1, nm+1
			if nm == 13 {
				ny, nm = ny+1, 1
			}
		}
		if py >= 1 {
			g.tp = appendDayPath(g.tp[:0], py, pm, pd)
			g.li(h, 2)
		}
		if ny <= 9999 {
			g.tp = appendDayPath(g.tp[:0], ny, nm, nd)
			g.li(h, 2)
		}
	}
	g.s("</ul>\n</body>\n</html>\n")
}

func (f *Farm) renderRedirect(g *gen, r *res) doc {
	h, id, k := r.h, r.id, r.k
	d := doc{status: redirCodes[(id+k)%len(redirCodes)], ctype: ctHTML, version: -1}
	th := h
	var next int
	last := false
	switch redirType(id) {
	case 0, 1:
		next = k + 1
		last = next == chainLen(id)
	case 2:
		next = (k + 1) % loopLen(id)
	default:
		next = k + 1
	}
	form := k % 3
	if last {
		var t int
		th, t = f.chainTarget(h, id, false)
		g.tpPage(th, t)
		if th != h {
			form = 1
		}
	} else {
		g.tpNum("/redir/", id, "/h")
		g.tp = appendInt(g.tp, next)
	}
	// The Location header is built in buf, then moved out; the body is empty.
	start := len(g.buf)
	switch form {
	case 0:
		g.buf = append(g.buf, g.tp...)
	case 1:
		g.buf = append(g.buf, g.pre[th]...)
		g.buf = append(g.buf, g.tp...)
	default:
		if last {
			g.buf = append(g.buf, g.tp...)
		} else {
			g.s("h")
			g.num(next)
		}
	}
	d.location = string(g.buf[start:])
	g.buf = g.buf[:start]
	if g.collect {
		d.locURL = g.pre[th] + string(g.tp)
	}
	return d
}

func (f *Farm) renderMeta(g *gen, r *res) {
	h, id, k := r.h, r.id, r.k
	delay := 0
	last := false
	var next int
	switch metaType(id) {
	case 0:
		next = k + 1
		last = next == metaChainLen(id)
	case 1:
		next = (k + 1) % 2
	default:
		delay, last = 10, true
	}
	th := h
	if last {
		var t int
		th, t = f.chainTarget(h, id, true)
		g.tpPage(th, t)
	} else {
		g.tpNum("/mr/", id, "/h")
		g.tp = appendInt(g.tp, next)
		g.tp = append(g.tp, ".html"...)
	}
	g.seedText(rMeta, id, k)
	g.s("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta http-equiv=\"refresh\" content=\"")
	g.num(delay)
	if k%2 == 0 {
		g.s("; url=")
	} else {
		g.s(";URL=")
	}
	if last {
		g.href(th, 1)
	} else {
		g.s("h")
		g.num(next)
		g.s(".html")
	}
	g.s(`">`)
	g.mark(KindMetaRefresh, th, delay)
	g.s("\n<title>Redirecting</title>\n</head>\n<body>\n")
	g.para(1)
	g.s("</body>\n</html>\n")
}

func (f *Farm) renderKindLeaf(g *gen, r *res) doc {
	d := doc{status: 200, ctype: ctHTML}
	g.seedText(rKindLeaf, r.id, r.sub)
	switch r.sub {
	case kFrameset:
		g.s("<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Frameset//EN\">\n<html>\n<head><title>")
		g.words(3)
		g.s("</title></head>\n<frameset cols=\"30%,70%\">\n")
		g.tpNum("/k/frame/", r.id, ".html")
		g.s("<frame src=\"")
		g.href(r.h, 0)
		g.s(`">`)
		g.mark(KindFrame, r.h, 0)
		g.tpPage(r.h, 0)
		g.s("\n<frame src=\"")
		g.href(r.h, 0)
		g.s(`">`)
		g.mark(KindFrame, r.h, 0)
		g.s("\n<noframes><p>")
		g.sentences(1, 0)
		g.s("</p></noframes>\n</frameset>\n</html>\n")
	case kLinkCSS, kStyle:
		d.ctype = "text/css"
		g.s("body { color: #222; margin: 0 auto; max-width: 40em; }\nh1 { font-size: 2em; }\n")
	case kScript:
		d.ctype = "application/javascript"
		g.s("// ")
		g.sentences(1, 0)
		g.s("\nvar farm = { ready: true };\n")
	case kImg, kPic:
		d.ctype = "image/png"
		f.appendPNG(g, r.id*16+r.sub)
	case kEmbed, kObject:
		d.ctype = "application/pdf"
		f.appendPDF(g)
	default:
		f.leaf(g, 0, nil)
	}
	return d
}

func (f *Farm) renderFile(g *gen, r *res) doc {
	d := doc{status: 200}
	g.seedText(rFile, r.id, 0)
	switch fileExts[r.id%4] {
	case "pdf":
		d.ctype = "application/pdf"
		f.appendPDF(g)
	case "txt":
		d.ctype = ctText
		for i := 0; i < 4; i++ {
			g.sentences(4, 0)
			g.s("\n\n")
		}
	case "png":
		d.ctype = "image/png"
		f.appendPNG(g, r.id)
	default:
		d.ctype = "application/octet-stream"
		for i := 0; i < 256; i++ {
			x := g.rng.next()
			g.buf = append(g.buf, byte(x), byte(x>>8), byte(x>>16), byte(x>>24),
				byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56))
		}
	}
	return d
}

// appendPDF appends a small, well-formed PDF with one page of text.
func (f *Farm) appendPDF(g *gen) {
	start := len(g.buf)
	var offs [5]int
	g.s("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offs[0] = len(g.buf) - start
	g.s("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n")
	offs[1] = len(g.buf) - start
	g.s("2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n")
	offs[2] = len(g.buf) - start
	g.s("3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>\nendobj\n")
	offs[3] = len(g.buf) - start
	g.tmp = g.tmp[:0]
	g.tmp = append(g.tmp, "BT /F1 12 Tf 72 720 Td ("...)
	mark := len(g.buf)
	g.sentences(2, 0)
	g.tmp = append(g.tmp, g.buf[mark:]...)
	g.buf = g.buf[:mark]
	g.tmp = append(g.tmp, ") Tj ET"...)
	g.s("4 0 obj\n<< /Length ")
	g.num(len(g.tmp))
	g.s(" >>\nstream\n")
	g.buf = append(g.buf, g.tmp...)
	g.s("\nendstream\nendobj\n")
	offs[4] = len(g.buf) - start
	g.s("5 0 obj\n<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>\nendobj\n")
	xref := len(g.buf) - start
	g.s("xref\n0 6\n0000000000 65535 f \n")
	for _, o := range offs {
		s := strconv.Itoa(o)
		for i := len(s); i < 10; i++ {
			g.s("0")
		}
		g.s(s)
		g.s(" 00000 n \n")
	}
	g.s("trailer\n<< /Size 6 /Root 1 0 R >>\nstartxref\n")
	g.num(xref)
	g.s("\n%%EOF\n")
}

// appendPNG appends a 16x16 PNG whose colours derive from v.
func (f *Farm) appendPNG(g *gen, v int) {
	x := hash(f.seed, saltFile, g.h, v, 0)
	img := image.NewNRGBA(image.Rect(0, 0, 16, 16))
	for i := 0; i < 16; i++ {
		for j := 0; j < 16; j++ {
			img.Set(i, j, color.NRGBA{R: byte(x) + byte(i*8), G: byte(x>>8) + byte(j*8), B: byte(x >> 16), A: 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // writing to a bytes.Buffer does not fail
	g.buf = append(g.buf, b.Bytes()...)
}

// The large page: a head with a link, filler text, a tail with a link.

func (f *Farm) bigHead(g *gen) {
	g.s("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>A very large page</title>\n</head>\n<body>\n<p>")
	g.tpStr("/big/0/head.html")
	g.a(g.h, 0, 2)
	g.s("</p>\n<pre>\n")
}

func (f *Farm) bigTail(g *gen) {
	g.s("\n</pre>\n<p>")
	g.tpStr("/big/0/tail.html")
	g.a(g.h, 0, 2)
	g.s("</p>\n</body>\n</html>\n")
}

// makeFiller builds 64 KiB of prose without markup for the large page.
func makeFiller(seed uint64) []byte {
	g := &gen{rng: rng{s: seed ^ 0x5eed}}
	for len(g.buf) < 64<<10 {
		g.sentences(3, 0)
		g.buf = append(g.buf, '\n')
	}
	return g.buf[:64<<10]
}
