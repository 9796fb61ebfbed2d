package extract

import (
	"crypto/md5"
	"hash"
)

// Checksum is the duplicate-detection checksum of an HTML document: the MD5
// of its text (so that markup-only changes do not make a document new),
// preceded, when useMeta (use_meta_csum) is set, by its meta tags as
// "name=content" lines. When cutOff (csum_cut_off) is positive only the
// first cutOff bytes of that input are used.
func Checksum(r *Result, useMeta bool, cutOff int) [md5.Size]byte {
	h := &cappedHash{h: md5.New(), left: cutOff}
	if useMeta {
		for _, m := range r.Meta {
			h.WriteString(m.Name)
			h.WriteString("=")
			h.WriteString(m.Content)
			h.WriteString("\n")
		}
	}
	h.WriteString(r.Text)
	var sum [md5.Size]byte
	h.h.Sum(sum[:0])
	return sum
}

// ChecksumBytes is the checksum of a document that is not HTML: the MD5 of
// its first cutOff bytes (all of them when cutOff <= 0).
func ChecksumBytes(body []byte, cutOff int) [md5.Size]byte {
	if cutOff > 0 && len(body) > cutOff {
		body = body[:cutOff]
	}
	return md5.Sum(body)
}

type cappedHash struct {
	h    hash.Hash
	left int // bytes still accepted; <= 0 at start means unlimited
	used int
}

func (c *cappedHash) WriteString(s string) {
	if c.left > 0 {
		room := c.left - c.used
		if room <= 0 {
			return
		}
		if len(s) > room {
			s = s[:room]
		}
	}
	c.used += len(s)
	c.h.Write([]byte(s))
}
