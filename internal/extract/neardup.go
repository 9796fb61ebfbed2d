package extract

import (
	"crypto/md5"
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

// Near-duplicate signature (near_duplicate_detection): MinHash over the
// document's word 3-shingles, cut into NearBands bands of nearRows values.
// Each band is hashed into a 16-byte key; two documents share a band key
// with probability J^nearRows per band, J being the Jaccard similarity of
// their shingle sets, so documents with J >= 0.8 share at least one of the
// NearBands keys with probability above 1 - 10^-4 while documents with
// J <= 0.2 share one with probability under 3.3%. Band keys never equal an
// MD5 content checksum or another band's key: the band number and a
// domain prefix are part of what is hashed. See docs/decisions/extract.md.
const (
	NearBands   = 20
	nearRows    = 4
	nearHashes  = NearBands * nearRows
	nearShingle = 3
)

// nearSeeds are the per-hash seeds of the MinHash family (fixed: every
// node scheduler must compute the same keys).
var nearSeeds = func() (s [nearHashes]uint64) {
	x := uint64(0x9e3779b97f4a7c15)
	for i := range s {
		x = mix64(x + uint64(i)*0xbf58476d1ce4e5b9)
		s[i] = x | 1
	}
	return s
}()

func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// NearKeys returns the near-duplicate band keys of an HTML document: the
// same input as Checksum (the text, preceded by the meta tags when useMeta,
// the first cutOff bytes when cutOff > 0), lowercased and split into words
// at every character that is not a letter or digit. A document without
// words has no keys (nil): only its exact checksum can match.
func NearKeys(r *Result, useMeta bool, cutOff int) [][16]byte {
	var in []byte
	if useMeta {
		for _, m := range r.Meta {
			in = append(in, m.Name...)
			in = append(in, '=')
			in = append(in, m.Content...)
			in = append(in, '\n')
		}
	}
	in = append(in, r.Text...)
	if cutOff > 0 && len(in) > cutOff {
		in = in[:cutOff]
	}
	return nearKeys(in)
}

func nearKeys(text []byte) [][16]byte {
	var mins [nearHashes]uint64
	for i := range mins {
		mins[i] = ^uint64(0)
	}
	var ring [nearShingle]uint64 // hashes of the last words
	words := 0
	add := func(x uint64) {
		for i, s := range nearSeeds {
			if v := mix64(x ^ s); v < mins[i] {
				mins[i] = v
			}
		}
	}
	shingle := func() uint64 {
		x := uint64(14695981039346656037)
		for k := 0; k < nearShingle; k++ {
			x = (x ^ ring[(words+k)%nearShingle]) * 1099511628211
		}
		return x
	}
	var w uint64
	inWord := false
	for i := 0; i <= len(text); {
		var c rune = ' '
		size := 1
		if i < len(text) {
			c, size = utf8.DecodeRune(text[i:])
		}
		i += size
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			if !inWord {
				w, inWord = 14695981039346656037, true
			}
			c = unicode.ToLower(c)
			w = (w ^ uint64(c)) * 1099511628211
			continue
		}
		if !inWord {
			continue
		}
		inWord = false
		ring[words%nearShingle] = mix64(w)
		words++
		if words >= nearShingle {
			add(shingle())
		}
	}
	if words == 0 {
		return nil
	}
	if words < nearShingle { // shorter than one shingle: the words are the shingle
		x := uint64(words)
		for k := 0; k < words; k++ {
			x = mix64(x ^ ring[k])
		}
		add(x)
	}
	keys := make([][16]byte, NearBands)
	buf := make([]byte, 0, 16+8*nearRows)
	for b := range keys {
		buf = append(buf[:0], "trawl-near\x00\x00\x00\x00"...)
		buf = append(buf, byte(b), nearRows)
		for _, v := range mins[b*nearRows : (b+1)*nearRows] {
			buf = binary.LittleEndian.AppendUint64(buf, v)
		}
		keys[b] = md5.Sum(buf)
	}
	return keys
}
