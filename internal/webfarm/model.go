package webfarm

import "strconv"

// The link graph. Every decision below is a pure function of the seed, the
// host index, a page number and, for FeatChanges, the refresh cycle.

const (
	// slotEvery spreads the special features over ordinary pages: page n
	// (n >= 1) carries feature slot n%slotEvery, item number n/slotEvery.
	slotEvery = 10
	offRedir  = 1
	offMeta   = 2
	offKinds  = 3
	offDups   = 4
	offFiles  = 5
	offErrors = 6
	offMetaRb = 7
	offBase   = 8

	// fanout is the number of backbone children of a page: page n links
	// to pages n*fanout+1 .. n*fanout+fanout, so every page is reachable
	// from the home page.
	fanout = 8
	// randomLinks is the number of other same-host pages each page links to.
	randomLinks = 4
	// crossLinks is the number of links to other hosts (FeatCrossLinks).
	crossLinks = 2
	// maxChangeCycle is the last cycle in which page text changes.
	maxChangeCycle = 64
	// maxEndless bounds the endless redirect chain and the deep paths;
	// beyond it the farm answers 404 (the crawler's limits end them far
	// earlier).
	maxEndless = 100000
	maxDeep    = 2000
)

func (f *Farm) has(h int, feat Feature) bool { return f.hosts[h].feat&feat != 0 }

func (f *Farm) pages() int { return f.cfg.PagesPerHost }

// topic is the first path segment of page n (n >= 1).
func (f *Farm) topic(h, n int) string {
	return topics[hash(f.seed, saltTopic, h, n, 0)%uint64(len(topics))]
}

// appendPagePath appends the path of page n of host h.
func (f *Farm) appendPagePath(b []byte, h, n int) []byte {
	if n == 0 {
		return append(b, '/')
	}
	b = append(b, '/')
	b = append(b, f.topic(h, n)...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ".html"...)
}

// slot returns the special item a page carries for a feature slot.
func slot(n, off int) (id int, ok bool) {
	if n < 1 || n%slotEvery != off {
		return 0, false
	}
	return n / slotEvery, true
}

// slotValid reports whether item id of a slot exists on a host.
func (f *Farm) slotValid(id, off int) bool {
	n := id*slotEvery + off
	return id >= 0 && n < f.pages()
}

// bornCycle is the first cycle in which page n exists.
func (f *Farm) bornCycle(h, n int) int {
	if n == 0 || !f.has(h, FeatChanges) {
		return 0
	}
	x := hash(f.seed, saltBorn, h, n, 0)
	if x%20 == 0 {
		return 1 + int((x>>32)%2)
	}
	return 0
}

// deathCycle is the first cycle in which page n is gone, or -1.
func (f *Farm) deathCycle(h, n int) int {
	if n == 0 || !f.has(h, FeatChanges) || f.bornCycle(h, n) != 0 {
		return -1
	}
	x := hash(f.seed, saltDies, h, n, 0)
	if x%25 == 1 {
		return 1 + int((x>>32)%2)
	}
	return -1
}

func (f *Farm) born(h, n, c int) bool { return c >= f.bornCycle(h, n) }

func (f *Farm) dead(h, n, c int) bool {
	d := f.deathCycle(h, n)
	return d >= 0 && c >= d
}

// goneStatus is the status of a dead page: 404 or 410.
func (f *Farm) goneStatus(h, n int) int {
	if hash(f.seed, saltGone, h, n, 0)%2 == 0 {
		return 404
	}
	return 410
}

// textVersion is the last cycle <= c in which page n's text changed.
func (f *Farm) textVersion(h, n, c int) int {
	if !f.has(h, FeatChanges) {
		return 0
	}
	v := 0
	for k := 1; k <= c && k <= maxChangeCycle; k++ {
		if hash(f.seed, saltChange, h, n, k)%4 == 0 {
			v = k
		}
	}
	return v
}

// crossTarget returns the i-th cross-host link of page n: a host other
// than h and a page of it.
func (f *Farm) crossTarget(h, n, i int) (h2, t int) {
	x := hash(f.seed, saltCross, h, n, i)
	h2 = (h + 1 + int(x%uint64(len(f.hosts)-1))) % len(f.hosts)
	t = int((x >> 32) % uint64(f.pages()))
	return h2, t
}

// randomTarget returns the i-th random same-host link of page n.
func (f *Farm) randomTarget(h, n, i int) int {
	return int(hash(f.seed, saltLinks, h, n, i) % uint64(f.pages()))
}

// metaRobots returns the robots META of page n: 0 none, 1 noindex,
// 2 nofollow, 3 both.
func (f *Farm) metaRobots(h, n int) int {
	if !f.has(h, FeatMetaRobots) {
		return 0
	}
	id, ok := slot(n, offMetaRb)
	if !ok {
		return 0
	}
	return 1 + id%3
}

// Redirect chains (FeatRedirects), item id: by id%4, 0 and 1 are chains
// of chainLen(id) redirects ending on a page of this host (0) or another
// host (1); 2 is a loop of 2 or 3 URLs; 3 is endless.
var chainLens = [...]int{1, 2, 3, 5, 11, 12}

func redirType(id int) int { return id % 4 }

func chainLen(id int) int { return chainLens[(id/4+id%4)%len(chainLens)] }

func loopLen(id int) int { return 2 + (id/4)%2 }

var redirCodes = [...]int{301, 302, 303, 307, 308}

// chainTarget is the final page of redirect chain id (or meta-refresh
// chain id when meta is set).
func (f *Farm) chainTarget(h, id int, meta bool) (h2, t int) {
	salt := uint64(0)
	if meta {
		salt = 1
	}
	x := hash(f.seed, saltChainTarget+salt*100, h, id, 0)
	t = 1 + int(x%uint64(max(1, f.pages()-1)))
	if f.pages() == 1 {
		t = 0
	}
	h2 = h
	if !meta && redirType(id) == 1 && len(f.hosts) > 1 {
		h2 = (h + 1 + int((x>>32)%uint64(len(f.hosts)-1))) % len(f.hosts)
		t = int((x >> 20) % uint64(f.pages()))
	}
	return h2, t
}

// Meta-refresh items (FeatMetaRefresh), by id%3: 0 a chain of
// metaChainLen(id) refreshes with delay 0 ending on a page; 1 a loop of two
// pages with delay 0; 2 one refresh with delay 10 to a page.
func metaType(id int) int     { return id % 3 }
func metaChainLen(id int) int { return 1 + (id/3)%3 }

// hiddenCount is the number of sitemap-only pages of a host.
func (f *Farm) hiddenCount() int { return max(1, f.pages()/20) }

// fileExt is the extension of file item id (FeatFiles).
var fileExts = [...]string{"pdf", "txt", "png", "bin"}

// errCodes are the statuses of error item id (FeatErrors) by id%4.
var errCodes = [...]int{404, 410, 500, 503}
