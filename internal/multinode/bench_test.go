package multinode

import (
	"fmt"
	"testing"

	"github.com/trawl/trawl/internal/cmt"
)

// BenchmarkForwardRouted measures an entry for a routed site going through
// the machine: queue, route lookup, forward.
func BenchmarkForwardRouted(b *testing.B) {
	h := newHarness(b, Config{}, testSpec(b, "c", ""))
	for i := range 8 {
		h.join(fmt.Sprintf("n%d", i), true)
	}
	const sites = 1000
	msgs := make([]*cmt.UMURI, sites)
	for i := range sites {
		host := fmt.Sprintf("site%d.example", i)
		h.m.RestoreRoute("c", host, fmt.Sprintf("n%d", i%8), host)
		msgs[i] = &cmt.UMURI{Collection: "c", Entry: entry(b, "http://"+host+"/page")}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.recv("n0", msgs[i%sites])
	}
}

// BenchmarkRouteNewSite measures routing a new site: DNS result, routing
// decision, ADD_ROUTE to 8 nodes, forward.
func BenchmarkRouteNewSite(b *testing.B) {
	h := newHarness(b, Config{}, testSpec(b, "c", `<attrib name="domain_clustering" type="boolean">yes</attrib>`))
	for i := range 8 {
		h.join(fmt.Sprintf("n%d", i), true)
	}
	ip := addrs("127.0.0.1")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		host := fmt.Sprintf("www.site%d.example.com", i)
		h.recv("n0", &cmt.UMURI{Collection: "c", Entry: cmt.Entry{URI: cmt.URIStructure{URI: "http://" + host + "/", Host: host, Parsed: true}}})
		h.m.DNSResult(host, ip, nil, h.now)
	}
}
