package crawlpipe

import (
	"bufio"
	"bytes"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/filter"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/lang"
	"github.com/trawl/trawl/internal/store"
)

// Crawl options of MS-FSCCFG that shape what a collection fetches and keeps
// beyond the rules of collection.go:
//
//   - variable_delay (2.2.4.23): the delay of the time slot the clock is in,
//     or no fetch at all in a "suspend" slot (frontier.DelaySlot; the
//     pipeline's pacer uses the same delay).
//   - mirror_site_files (2.2.3): every line names a crawl site and its
//     mirrors; a link to a mirror is a link to the preferred site (the first
//     name), so the mirrors are never fetched. The mirror names met in links
//     are recorded in the crawl store (Mirrors).
//   - focused (2.2.4.19): documents whose text is in none of the languages
//     are fetched but not kept (URI record status excluded, no document, not
//     fed), and their links are followed only depth hops away from the last
//     document in one of the languages.
//   - send_links_to (2.2.3): the links found in documents go to the named
//     collection instead of the collection's own crawl.
//   - extract_links_from_dupes (2.2.3): without it, the links of a document
//     found to be a duplicate of another are dropped.
type CrawlOptions struct {
	slots   []frontier.DelaySlot
	Mirrors map[string]string // mirror site or host -> preferred site or host
	focused *focusedCrawl
	SendTo  string
}

type focusedCrawl struct {
	langs map[string]bool
	depth int
	det   *lang.Detector
	// exclude holds focused/exclude_domains: a document on a host it
	// rejects is outside focused scheduling (kept whatever its language,
	// its links followed as from a document in one of the languages).
	exclude *filter.Filter
}

// maxMirrorFileBytes caps a mirror_site_files file.
const maxMirrorFileBytes = 16 << 20

// compileOptions compiles the options above into s (and s.Frontier).
func compileOptions(s *Settings, eff *config.Effective) error {
	o := &CrawlOptions{}
	for _, v := range eff.VariableDelays() {
		start := int(v.Slot.StartDay)*24*60 + v.Slot.StartMin
		end := int(v.Slot.EndDay)*24*60 + v.Slot.EndMin
		o.slots = append(o.slots, frontier.DelaySlot{Start: start, End: end, Suspend: v.Suspend,
			Delay: time.Duration(v.Delay * float64(time.Second))})
	}
	s.Frontier.Slots = o.slots
	for _, file := range eff.MirrorSiteFiles() {
		m, err := readMirrorFile(file)
		if err != nil {
			return fmt.Errorf("mirror_site_files: %w", err)
		}
		if o.Mirrors == nil {
			o.Mirrors = map[string]string{}
		}
		for k, v := range m {
			o.Mirrors[k] = v
		}
	}
	if f := eff.Focused(); len(f.Languages) > 0 {
		fc := &focusedCrawl{langs: map[string]bool{}, det: lang.New()}
		for _, l := range f.Languages {
			fc.langs[lang.Canonical(l)] = true
		}
		if f.Depth != nil {
			fc.depth = *f.Depth
		}
		if ex := eff.FocusedExcludeDomains(); len(ex.Rules) > 0 {
			flt, err := config.Scope{ExcludeDomains: ex}.Filter()
			if err != nil {
				return fmt.Errorf("focused: exclude_domains: %w", err)
			}
			fc.exclude = flt
		}
		o.focused = fc
	}
	if to, ok := eff.SendLinksTo(); ok && strings.TrimSpace(to) != "" && strings.TrimSpace(to) != s.Name {
		o.SendTo = strings.TrimSpace(to)
	}
	s.Opt = o
	return nil
}

// readMirrorFile reads a mirror_site_files file: one site per line followed
// by its mirrors, space-separated, the preferred name first; blank lines and
// lines starting with '#' are skipped. A name may carry a port (a crawl
// site, host:port) or not (then it stands for the host on any port).
func readMirrorFile(name string) (map[string]string, error) {
	b, err := ReadFileCapped(name, maxMirrorFileBytes)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		primary := strings.ToLower(f[0])
		for _, m := range f[1:] {
			m = strings.ToLower(m)
			if m == primary {
				continue
			}
			if (strings.Contains(m, ":") || strings.Contains(primary, ":")) && strings.Contains(m, ":") != strings.Contains(primary, ":") {
				return nil, fmt.Errorf("%s:%d: %q and %q: give both names with a port or both without", name, line, primary, m)
			}
			out[m] = primary
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// delayAt is the delay between fetches of a site at now (variable_delay).
func (s *Settings) delayAt(now time.Time) time.Duration {
	if s.Opt == nil || len(s.Opt.slots) == 0 {
		return s.Delay
	}
	if d, ok := frontier.DelayAt(s.Opt.slots, s.Delay, now); ok {
		return d
	}
	return s.Delay
}

// unmirror rewrites a normalized URI on a mirror site to the preferred
// site; it returns the mirror's site name ("" when u is on no mirror).
func (s *Settings) unmirror(u *url.URL) (mirror string) {
	if s.Opt == nil || len(s.Opt.Mirrors) == 0 {
		return ""
	}
	site := strings.ToLower(u.Host)
	if p, ok := s.Opt.Mirrors[site]; ok {
		u.Host = p
		return site
	}
	host := strings.ToLower(u.Hostname())
	if p, ok := s.Opt.Mirrors[host]; ok {
		if port := u.Port(); port != "" {
			p += ":" + port
		}
		u.Host = p
		return site
	}
	return ""
}

// Mirror meta keys: 'm' "mirror/" collection 0x00 mirror site -> preferred site.
const MirrorMetaPrefix = "mirror/"

// Mirrors returns the mirror sites the crawl of collection met in links, each
// with the site it was crawled as.
func Mirrors(st *store.Store, collection string) (map[string]string, error) {
	out := map[string]string{}
	p := []byte(MirrorMetaPrefix + collection + "\x00")
	err := st.IterRaw(store.SpaceMeta, p, func(k, v []byte) error {
		out[string(k[len(p):])] = string(v)
		return nil
	})
	return out, err
}

// focusedDoc applies the focused crawl to a fetched document of the job
// with text: it returns whether the document is kept and the number of
// other-language documents on the path to its links (-1: do not follow).
func (s *Settings) focusedDoc(j *Job, text string) (lang string, keep bool, off int) {
	fc := s.Opt.focused
	l, _ := fc.det.Detect(text)
	if fc.exclude != nil {
		if ok, _ := fc.exclude.Allowed(j.Fetch.URI, netip.Addr{}); !ok {
			return l, true, 0 // a domain excluded from focused scheduling
		}
	}
	if l == "" || fc.langs[l] {
		// A text too short to tell is given the benefit of the doubt.
		return l, true, 0
	}
	off = j.Meta.OffLang + 1
	if off > fc.depth {
		return l, false, -1
	}
	return l, false, off
}
