package config

import (
	"strings"
	"testing"
)

func TestNestedQuantifier(t *testing.T) {
	for re, want := range map[string]bool{
		`(a+)+$`: true, `^([a-z0-9:/.]+)+[A-Z]$`: true, `(\w+\s?)*$`: true, `(a*)*`: true, `((ab)+c)+`: true, `(x+){2,}`: true,
		`^https?://[^/]+/a+$`: false, `(ab)+`: false, `(a|b)*c`: false, `\(a+\)+`: false, `(a+){2}`: false, `[(a+)]+`: false,
	} {
		if got := NestedQuantifier(re); got != want {
			t.Errorf("NestedQuantifier(%q) = %v, want %v", re, got, want)
		}
	}
}

// TestConfigWarnsNestedQuantifier: the configuration check warns about an
// exclude_uris regexp with nested quantifiers, and accepts the file.
func TestConfigWarnsNestedQuantifier(t *testing.T) {
	src := `<CrawlerConfig><DomainSpecification name="c"><section name="exclude_uris">` +
		`<attrib name="regexp" type="list-string"><member>^http://a/b$</member><member>(a+)+$</member></attrib>` +
		`</section></DomainSpecification></CrawlerConfig>`
	cfg, err := Parse("c.xml", []byte(src), &Options{SkipFileChecks: true})
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, w := range cfg.Warnings {
		msgs = append(msgs, w.Error())
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, `"(a+)+$" nests quantifiers`) || strings.Contains(all, "^http://a/b$") {
		t.Errorf("warnings:\n%s", all)
	}
}
