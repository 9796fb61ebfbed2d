package config

import (
	"net/netip"
	"testing"
)

func TestScopeFilterAndMembership(t *testing.T) {
	xml := `<?xml version="1.0"?>
<CrawlerConfig>
  <DomainSpecification name="c">
    <section name="include_domains">
      <attrib name="suffix" type="list-string"><member>.contoso.com</member></attrib>
    </section>
    <section name="exclude_uris">
      <attrib name="regexp" type="list-string"><member>\.(exe|zip)$</member></attrib>
    </section>
    <SubDomain name="docs">
      <section name="include_uris">
        <attrib name="prefix" type="list-string"><member>http://www.contoso.com/docs/</member></attrib>
      </section>
      <attrib name="delay" type="real">5</attrib>
    </SubDomain>
  </DomainSpecification>
</CrawlerConfig>`
	cfg, err := Parse("t.xml", []byte(xml), nil)
	if err != nil {
		t.Fatal(err)
	}
	col := cfg.Collections[0]
	f, err := col.Top().Scope().Filter()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		uri  string
		want bool
	}{
		{"http://www.contoso.com/a.html", true},
		{"http://www.contoso.com/setup.exe", false},
		{"http://www.fabrikam.com/", false},
	} {
		if got, why := f.Allowed(tc.uri, netip.Addr{}); got != tc.want {
			t.Errorf("Allowed(%s) = %v (%s), want %v", tc.uri, got, why, tc.want)
		}
	}
	in := col.Membership()
	if e := col.For("http://www.contoso.com/docs/x", "", in); e.SubCollection == nil || e.SubCollection.Name != "docs" || e.Delay() != 5 {
		t.Errorf("docs URI: subcollection %v delay %v", e.SubCollection, e.Delay())
	}
	if e := col.For("http://www.contoso.com/other", "", in); e.SubCollection != nil || e.Delay() != 60 {
		t.Errorf("other URI: subcollection %v delay %v", e.SubCollection, e.Delay())
	}
}
