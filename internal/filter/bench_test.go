package filter

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// benchRules is a 50-rule configuration mixing every string rule type
// over the four sections.
func benchRules() Config {
	return Config{
		IncludeDomains: []Rule{ // 14
			{Suffix, ".contoso.com"}, {Suffix, ".fabrikam.com"}, {Suffix, ".adventure-works.com"},
			{Suffix, ".northwind.net"}, {Suffix, ".wingtip.org"}, {Suffix, ".litware.com"},
			{Exact, "contoso.com"}, {Exact, "fabrikam.com"}, {Exact, "tailspin.example"}, {Exact, "woodgrove.example"},
			{Prefix, "intranet."}, {Prefix, "wiki."},
			{Regexp, `^web\d+\.proseware\.com$`}, {Regexp, `^(docs|help)\.lucerne\.(com|net)$`},
		},
		ExcludeDomains: []Rule{ // 10
			{Exact, "private.contoso.com"}, {Exact, "hr.fabrikam.com"}, {Exact, "payroll.contoso.com"},
			{Prefix, "test."}, {Prefix, "staging."},
			{Suffix, ".internal.contoso.com"}, {Suffix, ".dev.fabrikam.com"},
			{Regexp, `^ci\d+\.`}, {Regexp, `-backup\.`}, {Regexp, `^old-.*\.litware\.com$`},
		},
		IncludeURIs: []Rule{ // 8
			{Prefix, "http://"}, {Prefix, "https://"}, {Prefix, "ftp://ftp.contoso.com/pub/"},
			{Exact, "http://contoso.com/"}, {Exact, "https://contoso.com/"},
			{Suffix, ".html"},
			{Regexp, `^https?://[^/]+/docs/`}, {Regexp, `^http://intranet\.[a-z]+/`},
		},
		ExcludeURIs: []Rule{ // 18
			{Suffix, ".exe"}, {Suffix, ".zip"}, {Suffix, ".iso"}, {Suffix, ".msi"}, {Suffix, "/logout"}, {Suffix, "?print=1"},
			{Prefix, "http://www.contoso.com/cgi-bin/"}, {Prefix, "https://www.fabrikam.com/admin/"},
			{Prefix, "http://wiki.contoso.com/Special:"}, {Prefix, "http://www.contoso.com/search?"},
			{Exact, "http://www.contoso.com/robots.txt"}, {Exact, "http://www.fabrikam.com/sitemap.xml"},
			{Exact, "https://www.litware.com/login"},
			{Regexp, `[?&](jsessionid|phpsessid|sid)=`}, {Regexp, `/calendar/\d{4}/\d{2}/`},
			{Regexp, `\.(jpe?g|png|gif)$`}, {Regexp, `/(print|email|share)/`}, {Regexp, `action=(edit|history|diff)`},
		},
	}
}

func benchFilter(tb testing.TB) *Filter {
	tb.Helper()
	f, err := New(benchRules())
	if err != nil {
		tb.Fatal(err)
	}
	return f
}

// benchURIs returns realistic normalized URIs: mostly accepted, about one
// in six rejected by some rule.
func benchURIs() []string {
	r := rand.New(rand.NewPCG(7, 11))
	domains := []string{"contoso.com", "fabrikam.com", "adventure-works.com", "northwind.net", "wingtip.org", "litware.com"}
	subs := []string{"www", "docs", "blog", "shop", "news", "support", "images", "media", "en", "de"}
	words := []string{"products", "about", "team", "2024", "report", "index.html", "article", "view", "category", "item",
		"press", "faq", "download", "guide", "a-long-article-title-with-words", "p", "list", "detail.aspx", "contact", "help"}
	var hosts []string
	for i := 0; i < 300; i++ {
		hosts = append(hosts, subs[r.IntN(len(subs))]+fmt.Sprint(i%7)+"."+domains[r.IntN(len(domains))])
	}
	hosts = append(hosts, "test.contoso.com", "private.contoso.com", "ci7.fabrikam.com", "web3.proseware.com", "www.outside.example")
	uris := make([]string, 0, 10000)
	for len(uris) < cap(uris) {
		scheme := "http"
		if r.IntN(3) == 0 {
			scheme = "https"
		}
		u := scheme + "://" + hosts[r.IntN(len(hosts))] + "/"
		for n := r.IntN(4); n > 0; n-- {
			u += words[r.IntN(len(words))] + "/"
		}
		u += words[r.IntN(len(words))]
		switch r.IntN(12) {
		case 0:
			u += "?id=" + fmt.Sprint(r.IntN(100000))
		case 1:
			u += "?page=2&sort=asc"
		case 2:
			u += ".zip"
		case 3:
			u += "?sid=" + fmt.Sprint(r.IntN(1000))
		case 4:
			u += ".png"
		}
		uris = append(uris, u)
	}
	return uris
}

// BenchmarkFilter50Rules measures Filter.Allowed over 10,000 realistic
// URIs against the 50-rule benchRules configuration.
func BenchmarkFilter50Rules(b *testing.B) {
	f := benchFilter(b)
	uris := benchURIs()
	accepted := 0
	for _, u := range uris {
		if ok, _ := f.Allowed(u, netip.Addr{}); ok {
			accepted++
		}
	}
	b.Logf("%d of %d URIs accepted", accepted, len(uris))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	i := 0
	for b.Loop() {
		f.Allowed(uris[i%len(uris)], netip.Addr{})
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
	if cpu := processCPU() - cpu0; cpu > 0 {
		// On a shared machine wall time includes other processes' turns.
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "checks/cpu-s")
	}
}

// BenchmarkFilter50RulesParallel is the same on every core.
func BenchmarkFilter50RulesParallel(b *testing.B) {
	f := benchFilter(b)
	uris := benchURIs()
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	b.RunParallel(func(pb *testing.PB) {
		i := rand.IntN(len(uris))
		for pb.Next() {
			f.Allowed(uris[i%len(uris)], netip.Addr{})
			i++
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "checks/s")
	if cpu := processCPU() - cpu0; cpu > 0 {
		b.ReportMetric(float64(b.N)/cpu.Seconds(), "checks/cpu-s")
	}
}
