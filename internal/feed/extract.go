package feed

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"github.com/trawl/trawl/internal/extract"
	"github.com/trawl/trawl/internal/index"
)

// Limits of text extraction.
const (
	// MaxTextBytes caps the extracted text of a document.
	MaxTextBytes = 1 << 20
	// MaxExtractInput caps the document size extraction will read (PDF
	// and Office documents beyond it are not extracted).
	MaxExtractInput = 64 << 20
	// maxZipParts and maxZipBytes cap what is read of an Office archive.
	maxZipParts = 2000
	maxZipBytes = 64 << 20
)

// Extracted is the text of a document.
type Extracted struct {
	Title, Text, Description, Language string
	// Method is how the text was obtained ("html", "text", "pdf",
	// "ooxml", "odf"), or "none: <reason>".
	Method string
}

// ExtractText extracts the title and text of a document of the given MIME
// type (parameters such as charset are honoured for HTML). HTML goes
// through internal/extract, text/* is taken as is (valid UTF-8 only), PDF
// through github.com/ledongthuc/pdf, Office Open XML (docx, xlsx, pptx) and
// OpenDocument through archive/zip and encoding/xml. Other types, and
// documents those readers fail on, are "not extracted": Method says why and
// the document is indexed by its URL, title and anchor text only. It never
// panics.
func ExtractText(mime string, content []byte) Extracted {
	switch index.TypeOf(mime) {
	case "html":
		return HTMLText(extract.Extract(content, extract.Options{ContentType: mime, MaxTextBytes: MaxTextBytes, MaxLinks: 1}))
	case "text", "xml":
		if !utf8.Valid(content) {
			content = []byte(strings.ToValidUTF8(string(content), "\uFFFD"))
		}
		return Extracted{Text: truncateText(string(content)), Method: "text"}
	case "pdf":
		return extractPDF(content)
	case "office":
		return extractOffice(content)
	}
	return Extracted{Method: "none: " + index.NormalizeMIME(mime) + " is not extracted"}
}

// HTMLText is the text of an HTML document that internal/extract parsed
// (with MaxTextBytes left at its default, which is MaxTextBytes): what
// ExtractText returns for the same bytes and Content-Type. A crawl step
// that parsed the page for its links hands it to feeding this way, so
// the page is not parsed again for the index.
func HTMLText(r *extract.Result) Extracted {
	return Extracted{Title: r.Title, Text: r.Text, Description: r.Description, Language: r.Language, Method: "html"}
}

// ParsedText returns the text of a document fed with media type mime
// (no parameters, as the crawl store keeps it) from r, internal/extract's
// parse of the document under the response's Content-Type header
// parsedType, or false when the index would not read the document as
// HTML or the header names another media type. It is ExtractText's
// result for the same bytes, except that a charset parameter of the
// header, which the parse honoured, is not lost.
func ParsedText(mime, parsedType string, r *extract.Result) (Extracted, bool) {
	if r == nil || index.TypeOf(mime) != "html" {
		return Extracted{}, false
	}
	if parsedType != "" && index.NormalizeMIME(parsedType) != index.NormalizeMIME(mime) {
		return Extracted{}, false
	}
	return HTMLText(r), true
}

func truncateText(s string) string {
	if len(s) <= MaxTextBytes {
		return s
	}
	n := MaxTextBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func extractPDF(content []byte) (out Extracted) {
	if len(content) > MaxExtractInput {
		return Extracted{Method: "none: pdf larger than the extraction limit"}
	}
	// The PDF reader panics on some malformed files.
	defer func() {
		if r := recover(); r != nil {
			out = Extracted{Method: fmt.Sprintf("none: unreadable pdf (%v)", r)}
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return Extracted{Method: "none: unreadable pdf: " + err.Error()}
	}
	var b strings.Builder
	for i := 1; i <= r.NumPage() && b.Len() < MaxTextBytes; i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			continue
		}
		t, err := p.GetPlainText(nil)
		if err != nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t)
	}
	title := ""
	if info := r.Trailer().Key("Info"); !info.IsNull() {
		title = info.Key("Title").Text()
	}
	return Extracted{Title: strings.TrimSpace(title), Text: truncateText(collapse(b.String())), Method: "pdf"}
}

// collapse collapses runs of white space into one space.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// extractOffice reads Office Open XML and OpenDocument archives: the text of
// <t> elements of the document parts (word/document.xml, the slides, the
// shared strings of a workbook) or all the text of content.xml, and the
// dc:title of the properties.
func extractOffice(content []byte) Extracted {
	if len(content) > MaxExtractInput {
		return Extracted{Method: "none: office document larger than the extraction limit"}
	}
	zr, err := zip.NewReader(bytes.NewReader(content), int64(len(content)))
	if err != nil {
		return Extracted{Method: "none: not an OOXML or OpenDocument archive (legacy binary Office formats are not extracted)"}
	}
	if len(zr.File) > maxZipParts {
		return Extracted{Method: "none: office archive has too many parts"}
	}
	var textParts []*zip.File
	var props *zip.File
	method, allText := "", false
	for _, f := range zr.File {
		name := f.Name
		switch {
		case name == "content.xml":
			textParts, method, allText = []*zip.File{f}, "odf", true
		case name == "meta.xml" || name == "docProps/core.xml":
			props = f
		case method != "odf" && (name == "word/document.xml" || name == "xl/sharedStrings.xml" ||
			(strings.HasPrefix(name, "ppt/slides/slide") && path.Ext(name) == ".xml")):
			textParts, method = append(textParts, f), "ooxml"
		}
	}
	if method == "" {
		return Extracted{Method: "none: office archive without a known text part"}
	}
	sort.SliceStable(textParts, func(i, j int) bool { return naturalLess(textParts[i].Name, textParts[j].Name) })
	budget := int64(maxZipBytes)
	var b strings.Builder
	for _, f := range textParts {
		if err := xmlText(f, &budget, &b, allText, "t"); err != nil {
			return Extracted{Method: "none: unreadable office document: " + err.Error()}
		}
	}
	var title strings.Builder
	if props != nil {
		_ = xmlText(props, &budget, &title, false, "title")
	}
	return Extracted{Title: collapse(title.String()), Text: truncateText(collapse(b.String())), Method: method}
}

// naturalLess orders slide2.xml before slide10.xml.
func naturalLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

var errZipBudget = errors.New("office archive expands beyond the extraction limit")

// xmlText appends to b the character data of the elements named elem (all
// character data when all is set), with a space at each element end.
func xmlText(f *zip.File, budget *int64, b *strings.Builder, all bool, elem string) error {
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	lr := &io.LimitedReader{R: rc, N: *budget + 1}
	defer func() { *budget = lr.N - 1 }()
	d := xml.NewDecoder(lr)
	d.Strict = false
	depth := 0
	for b.Len() < MaxTextBytes {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if lr.N <= 0 {
				return errZipBudget
			}
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == elem {
				depth++
			}
		case xml.EndElement:
			if t.Name.Local == elem && depth > 0 {
				depth--
			}
			if all || t.Name.Local == "p" || t.Name.Local == "si" {
				b.WriteByte(' ')
			}
		case xml.CharData:
			if all || depth > 0 {
				b.Write(t)
			}
		}
	}
	return nil
}

// Prepare fills op's Title, Text and Meta (Language, Description,
// Extraction) from its Content when Text is empty and the operation is not
// a remove. Fields already set are kept.
func Prepare(op *Operation) {
	if op.Kind == Remove || op.Text != "" || op.Meta.Extraction != "" {
		return
	}
	if len(op.Content) == 0 {
		op.Meta.Extraction = "none: empty document"
		return
	}
	op.SetText(ExtractText(op.MIME, op.Content))
}

// SetText fills op's Text and Meta.Extraction from x, and its Title,
// Meta.Language and Meta.Description where they are empty, then drops
// Content: the destinations index the text, never the original bytes, so
// an operation whose text is known need not carry (nor the outbox store)
// the document a second time.
func (op *Operation) SetText(x Extracted) {
	if op.Title == "" {
		op.Title = x.Title
	}
	op.Text = x.Text
	if op.Meta.Language == "" {
		op.Meta.Language = x.Language
	}
	if op.Meta.Description == "" {
		op.Meta.Description = x.Description
	}
	op.Meta.Extraction = x.Method
	op.Content = nil
}
