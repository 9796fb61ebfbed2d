package lang

import (
	"testing"

	"github.com/trawl/trawl/internal/webfarm"
)

func TestDetect(t *testing.T) {
	d := New()
	cases := []struct{ name, text, want string }{
		{"unknown: numbers", "12 34 56 78 90 11 12 13", ""},
		{"unknown: empty", "", ""},
		{"unknown: names", "Oslo Berlin Paris London Madrid Roma Lisboa Amsterdam", ""},
		{"sv", "Det var en gång en flicka som bodde i en liten stuga vid sjön, och hon hade inte många vänner men hon var glad ändå.", "sv"},
		{"da", "Der var engang en pige, som boede i et lille hus ved søen, og hun havde ikke mange venner, men hun var glad alligevel, fordi hun havde meget at lave.", "da"},
		{"es", "La ciudad está junto al río y la mayoría de las personas que viven en el valle trabajan en el centro porque hay muchas oficinas.", "es"},
	}
	for _, code := range []string{"en", "de", "fr", "no"} {
		for n := 1; n <= 3; n++ {
			cases = append(cases, struct{ name, text, want string }{"farm " + code, webfarm.LangSample(code, n), code})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, share := d.Detect(c.text)
			if got != c.want {
				t.Errorf("Detect(%q) = %q (%.2f), want %q", c.text, got, share, c.want)
			}
		})
	}
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{"nb": "no", "NN": "no", "en-GB": "en", " de ": "de", "fr_CA": "fr"} {
		if got := Canonical(in); got != want {
			t.Errorf("Canonical(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzDetect(f *testing.F) {
	f.Add("the quick brown fox")
	f.Add("\xff\xfe ü ø å")
	d := New()
	f.Fuzz(func(t *testing.T, s string) {
		l, share := d.Detect(s)
		if share < 0 || share > 1 || (l != "" && share == 0) {
			t.Fatalf("Detect(%q) = %q %v", s, l, share)
		}
	})
}
