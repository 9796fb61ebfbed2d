package extract

import (
	"strings"
	"testing"
	"time"
)

// TestPathological feeds inputs that would make a naive scanner quadratic.
func TestPathological(t *testing.T) {
	inputs := map[string]string{
		"css":     "<style>" + strings.Repeat("url(x) ", 200000) + "</style>",
		"css2":    "<style>" + strings.Repeat("url(", 200000) + "</style>",
		"comment": "<!--" + strings.Repeat("href href= http http:// ", 100000) + "-->",
		"script":  "<script>" + strings.Repeat(`x = "a`+"\n", 100000) + strings.Repeat(`'`, 100000) + "</script>",
		"attrs":   "<div " + strings.Repeat("style=url(a) ", 50000) + ">",
		"nest":    strings.Repeat("<a href=x><b>", 100000),
	}
	for name, in := range inputs {
		start := time.Now()
		Extract([]byte(in), Options{Kinds: AllKinds})
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: %v", name, d)
		}
		t.Logf("%s: %d bytes in %v", name, len(in), time.Since(start))
	}
}
