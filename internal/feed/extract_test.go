package feed

import (
	"archive/zip"
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// minimalPDF builds a one-page PDF showing text, with an Info title.
func minimalPDF(title, text string) []byte {
	var b bytes.Buffer
	var offsets []int
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	stream := "BT /F1 24 Tf 72 720 Td (" + text + ") Tj ET"
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	obj("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>")
	obj(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(stream), stream))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	obj("<< /Title (" + title + ") >>")
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	return b.Bytes()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, body := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestExtractText(t *testing.T) {
	docx := zipOf(t, map[string]string{
		"[Content_Types].xml": `<Types/>`,
		"word/document.xml": `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			`<w:p><w:r><w:t>Quarterly</w:t></w:r><w:r><w:t xml:space="preserve"> report</w:t></w:r></w:p><w:p><w:r><w:t>second paragraph</w:t></w:r></w:p></w:body></w:document>`,
		"docProps/core.xml": `<cp:coreProperties xmlns:cp="x" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Q3 Report</dc:title></cp:coreProperties>`,
	})
	pptx := zipOf(t, map[string]string{
		"ppt/slides/slide10.xml": `<p:sld xmlns:a="a" xmlns:p="p"><a:p><a:r><a:t>tenth</a:t></a:r></a:p></p:sld>`,
		"ppt/slides/slide2.xml":  `<p:sld xmlns:a="a" xmlns:p="p"><a:p><a:r><a:t>second</a:t></a:r></a:p></p:sld>`,
	})
	odt := zipOf(t, map[string]string{
		"content.xml": `<office:document-content xmlns:office="o" xmlns:text="t"><office:body><text:p>Open</text:p><text:p>document</text:p></office:body></office:document-content>`,
		"meta.xml":    `<office:document-meta xmlns:office="o" xmlns:dc="http://purl.org/dc/elements/1.1/"><office:meta><dc:title>ODF title</dc:title></office:meta></office:document-meta>`,
	})
	tests := []struct {
		name, mime string
		content    []byte
		want       Extracted
	}{
		{"html", "text/html; charset=utf-8", []byte(`<html lang="de"><head><title>Titel</title><meta name="description" content="Beschreibung"></head><body><p>Hallo <b>Welt</b></p><script>x()</script></body></html>`),
			Extracted{Title: "Titel", Text: "Hallo Welt", Description: "Beschreibung", Language: "de", Method: "html"}},
		{"text", "text/plain", []byte("just text\nhere"), Extracted{Text: "just text\nhere", Method: "text"}},
		{"invalid utf-8 text", "text/plain", []byte("a\xffb"), Extracted{Text: "a\uFFFDb", Method: "text"}},
		{"pdf", "application/pdf", minimalPDF("Test Manual", "Hello PDF world"), Extracted{Title: "Test Manual", Text: "Hello PDF world", Method: "pdf"}},
		{"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx,
			Extracted{Title: "Q3 Report", Text: "Quarterly report second paragraph", Method: "ooxml"}},
		{"pptx slides in order", "application/vnd.openxmlformats-officedocument.presentationml.presentation", pptx,
			Extracted{Text: "second tenth", Method: "ooxml"}},
		{"odt", "application/vnd.oasis.opendocument.text", odt, Extracted{Title: "ODF title", Text: "Open document", Method: "odf"}},
		{"legacy doc", "application/msword", []byte("\xd0\xcf\x11\xe0 binary"),
			Extracted{Method: "none: not an OOXML or OpenDocument archive (legacy binary Office formats are not extracted)"}},
		{"image", "image/png", []byte("\x89PNG"), Extracted{Method: "none: image/png is not extracted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ExtractText(tt.mime, tt.content)
			if got != tt.want {
				t.Errorf("ExtractText = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestExtractBadPDF(t *testing.T) {
	good := minimalPDF("T", "text")
	for i, in := range [][]byte{
		[]byte("%PDF-1.4\ngarbage"),
		good[:len(good)/2],
		bytes.Replace(good, []byte("/Count 1"), []byte("/Count -5"), 1),
		bytes.Replace(good, []byte("/Length"), []byte("/Length 99999999 /X"), 1),
	} {
		got := ExtractText("application/pdf", in)
		if !strings.HasPrefix(got.Method, "none: ") && got.Method != "pdf" {
			t.Errorf("case %d: method %q", i, got.Method)
		}
	}
}

func FuzzExtractText(f *testing.F) {
	f.Add("application/pdf", minimalPDF("T", "hello"))
	f.Add("application/vnd.openxmlformats-officedocument.wordprocessingml.document", []byte("PK\x03\x04"))
	f.Add("text/html", []byte("<title>x</title>y"))
	f.Fuzz(func(t *testing.T, mime string, content []byte) {
		x := ExtractText(mime, content) // must not panic
		if x.Method == "" || len(x.Text) > MaxTextBytes {
			t.Fatalf("bad result %+v", x)
		}
	})
}

func TestPrepare(t *testing.T) {
	op := htmlDoc("http://a/", "T")
	op.Meta.Language = "fr"
	Prepare(&op)
	if op.Title != "T" || !strings.Contains(op.Text, "body of T") || op.Meta.Extraction != "html" || op.Meta.Language != "fr" {
		t.Errorf("Prepare = %+v", op)
	}
	empty := Operation{Kind: Add, URI: "http://b/"}
	Prepare(&empty)
	if empty.Meta.Extraction != "none: empty document" {
		t.Errorf("empty: %+v", empty.Meta)
	}
	rm := Operation{Kind: Remove, URI: "http://c/", Content: []byte("x"), MIME: "text/plain"}
	Prepare(&rm)
	if rm.Text != "" || rm.Meta.Extraction != "" {
		t.Errorf("remove prepared: %+v", rm)
	}
}
