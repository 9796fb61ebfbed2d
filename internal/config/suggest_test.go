package config

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestUnknownNamesCostLittle: a 16 MB configuration of unknown parameter
// names (the did-you-mean used to cost an edit distance against every
// known name for each: 32 s) is refused quickly, with a bounded list of
// errors, and a huge name is never echoed whole.
func TestUnknownNamesCostLittle(t *testing.T) {
	size := 16<<20 - 1024 // just under the file cap
	if raceEnabled {
		size = 3 << 20
	}
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0"?><CrawlerConfig><DomainSpecification name="c"><attrib name="delai0" type="real">1</attrib>`)
	huge := strings.Repeat("x", min(2<<20, size/8))
	fmt.Fprintf(&b, `<attrib name="%s" type="real">1</attrib><section name="%s"/>`, huge, huge)
	for i := 1; b.Len() < size-100; i++ {
		fmt.Fprintf(&b, `<attrib name="delai%d" type="real">1</attrib>`, i)
	}
	b.WriteString(`</DomainSpecification></CrawlerConfig>`)
	start := processCPU() // CPU, not wall time: the machine is shared
	_, err := Parse("big.xml", b.Bytes(), &Options{SkipFileChecks: true})
	took := processCPU() - start
	if err == nil {
		t.Fatal("accepted")
	}
	msg := err.Error()
	t.Logf("%d MiB of unknown names: %v of CPU, %d errors, %d bytes of message", size>>20, took, strings.Count(msg, "\n")+1, len(msg))
	if limit := 5 * time.Second; took > limit {
		t.Errorf("took %v of CPU, want under %v", took, limit)
	}
	if strings.Contains(msg, huge[:1024]) {
		t.Error("the 2 MB name is echoed")
	}
	if len(msg) > 1<<20 {
		t.Errorf("message of %d bytes", len(msg))
	}
	if !strings.Contains(msg, `parameter delai0: unknown parameter (did you mean "delay"?)`) {
		t.Errorf("the first names lost their suggestion:\n%.500s", msg)
	}
}
