package crawllog

import (
	"encoding/xml"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
)

// Kind is one of the logs of the log section.
type Kind uint8

// The kinds of log (MS-FSCCFG 2.2.4.5).
const (
	Fetch       Kind = iota // one line per document request
	PostProcess             // what post processing did with each document
	Header                  // the HTTP response header of each fetch
	Screened                // every URI the rules rejected, with the reason
	Scheduler               // adaptive rescheduling decisions
	DSFeed                  // operations fed to the index and their results
	Site                    // per-site events
	numKinds
)

var kindNames = [numKinds]string{"fetch", "postprocess", "header", "screened", "scheduler", "dsfeed", "site"}

var kindFiles = [numKinds]string{"fetch.log", "postprocess.log", "header.log", "screened.log", "schedule.log", "dsfeed.log", "site.log"}

// Kinds lists every kind.
func Kinds() []Kind {
	out := make([]Kind, numKinds)
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// FileName is the name of the kind's file in a collection's directory.
func (k Kind) FileName() string {
	if k < numKinds {
		return kindFiles[k]
	}
	return ""
}

// LogFile is the CMD_UM_LOG code of the kind (MS-FSCMT 2.2.4.8), if it has
// one: only site, screened, scheduler and fetch can go to the multinode
// scheduler.
func (k Kind) LogFile() (cmt.LogFile, bool) {
	switch k {
	case Site:
		return cmt.LogSite, true
	case Screened:
		return cmt.LogScreened, true
	case Scheduler:
		return cmt.LogSchedule, true
	case Fetch:
		return cmt.LogFetch, true
	}
	return "", false
}

// KindOf returns the kind of a CMD_UM_LOG code.
func KindOf(f cmt.LogFile) (Kind, bool) {
	switch f {
	case cmt.LogSite:
		return Site, true
	case cmt.LogScreened:
		return Screened, true
	case cmt.LogSchedule:
		return Scheduler, true
	case cmt.LogFetch:
		return Fetch, true
	}
	return 0, false
}

// Format is how a log is written.
type Format uint8

// Formats of the log section.
const (
	None Format = iota
	Text
	XML
)

// ParseFormat reads a value of the log section: "text", "xml" or anything
// else (the validator allows "none" only) for None.
func ParseFormat(s string) Format {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "text":
		return Text
	case "xml":
		return XML
	}
	return None
}

// Formats are the formats of every kind for one collection.
type Formats [numKinds]Format

// FormatsOf reads the effective log section.
func FormatsOf(ls config.LogSection) Formats {
	return Formats{
		Fetch:       ParseFormat(ls.Fetch),
		PostProcess: ParseFormat(ls.Postprocess),
		Header:      ParseFormat(ls.Header),
		Screened:    ParseFormat(ls.Screened),
		Scheduler:   ParseFormat(ls.Scheduler),
		DSFeed:      ParseFormat(ls.Dsfeed),
		Site:        ParseFormat(ls.Site),
	}
}

// Of returns the format of kind k.
func (f *Formats) Of(k Kind) Format {
	if f == nil || k >= numKinds {
		return None
	}
	return f[k]
}

// On reports whether kind k is logged.
func (f *Formats) On(k Kind) bool { return f.Of(k) != None }

// Path returns the file of kind k of collection coll under root.
func Path(root, coll string, k Kind) (string, error) {
	if k >= numKinds {
		return "", fmt.Errorf("crawllog: unknown log kind %d", uint8(k))
	}
	dir := url.PathEscape(coll)
	if dir == "" || dir == "." || dir == ".." {
		return "", fmt.Errorf("crawllog: collection name %q cannot name a directory", coll)
	}
	return filepath.Join(root, dir, kindFiles[k]), nil
}

// TimeLayout is the layout of the time that starts a text line.
const TimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Line makes a text line: the time, then the fields separated by spaces.
// Line breaks inside a field become spaces, an empty field "-".
func Line(t time.Time, fields ...string) string {
	var b strings.Builder
	b.WriteString(t.UTC().Format(TimeLayout))
	for _, f := range fields {
		b.WriteByte(' ')
		if f == "" {
			b.WriteByte('-')
			continue
		}
		b.WriteString(OneLine(f))
	}
	return b.String()
}

// OneLine replaces the line breaks (and other control characters) of s with
// spaces.
func OneLine(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// Element makes an XML log line: an empty element named name with a time
// attribute and the attribute pairs attrs (name, value, ...); an empty
// value leaves its attribute out.
func Element(name string, t time.Time, attrs ...string) string {
	var b strings.Builder
	b.WriteByte('<')
	b.WriteString(name)
	b.WriteString(` time="`)
	b.WriteString(t.UTC().Format(TimeLayout))
	b.WriteByte('"')
	for i := 0; i+1 < len(attrs); i += 2 {
		if attrs[i+1] == "" {
			continue
		}
		b.WriteByte(' ')
		b.WriteString(attrs[i])
		b.WriteString(`="`)
		_ = xml.EscapeText(&b, []byte(OneLine(attrs[i+1])))
		b.WriteByte('"')
	}
	b.WriteString("/>")
	return b.String()
}
