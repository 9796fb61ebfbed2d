// Package marshal reads and writes MS-FSWCU ("pyfastmarshal") data, the
// serialization inside MS-FSCMT frames, MS-FSCADM statistics and MS-FSFDMW
// dictionaries. MS-FSWCU is not public; trawl takes it to be CPython 2
// marshal, version 2 (DESIGN.md section 4.1, specs/notes/pyfastmarshal.md).
//
// # Byte layout
//
// A value is one type code byte and a payload. All numbers are
// little-endian; int32 is two's complement; a length or count is an
// int32 that must not be negative. There is no header: a message is one
// value.
//
//	code  payload                                   value
//	'0'   -                                         end of a dict (not a value)
//	'N'   -                                         None
//	'F'   -                                         False
//	'T'   -                                         True
//	'S'   -                                         StopIteration
//	'.'   -                                         Ellipsis
//	'i'   int32                                     int
//	'I'   int32 low word, int32 high word (int64)   int (64-bit builds)
//	'l'   int32 n, |n| x uint16 digit               long: sign of n, base 2^15
//	                                                digits (0..0x7FFF), least
//	                                                significant first; top
//	                                                digit not 0; n = 0 is 0
//	'f'   uint8 n, n bytes ASCII repr               float (versions 0, 1)
//	'g'   float64 (IEEE 754)                        float (version 2)
//	'x'   two 'f' payloads: real, imag              complex (versions 0, 1)
//	'y'   float64 real, float64 imag                complex (version 2)
//	's'   int32 n, n bytes                          str (bytes)
//	't'   int32 n, n bytes                          interned str: also appended
//	                                                to the message's string table
//	'R'   int32 index                               str: entry of that table
//	'u'   int32 n, n bytes UTF-8                    unicode
//	'('   int32 n, n values                         tuple
//	'['   int32 n, n values                         list
//	'{'   key, value, ... '0'                       dict (no count)
//	'<'   int32 n, n values                         set
//	'>'   int32 n, n values                         frozenset
//	'c'   (code object)                             rejected
//	'?'   (unmarshallable object)                   rejected
//
// For example the tuple (1, 'x') is
//
//	28 02000000  69 01000000  73 01000000 78
//
// # Decoding
//
// Decode and DecodeLimits accept every code above but 'c' and '?', as
// CPython 2.7 does: the string table of 't' and 'R' lives for one message,
// a long with a top digit of 0 or a digit above 0x7FFF is refused, a '0'
// where a value is expected is refused (CPython 2 silently drops a dict
// entry whose value is '0'; trawl refuses it), dict keys and set members
// must be hashable (no list, dict or set, also inside a tuple), and 'u'
// must be UTF-8 (surrogate code points in three bytes are allowed, as
// CPython allows them). Limits cap every length, count and the nesting
// depth before anything is allocated; a length larger than what remains
// of the input fails at once. Decoding never panics.
//
// Python 2 distinguishes int (i, I) from long (l); the value model does
// not: every integer that fits in int64 decodes to Int, whatever its code,
// and only wider ones to Long. 5 and 5L compare equal in Python, and the
// encoder writes each integer in the form CPython 2.7 writes an int.
//
// The Reader decodes a message piece by piece into the caller's own
// structures without building Values; this is the hot path of the MS-FSCMT
// message codecs. It can save a position and return to it (Mark, Seek),
// and hand out the strings of a small message as substrings of one copy
// (ReadSharedString). Decode and ReadValue take the element arrays of a
// message's containers from shared slabs and box equal nearby strings,
// empty values and small ints once, so a Value tree costs far fewer
// allocations than it has values.
//
// # Encoding
//
// Encode and AppendValue write the codes N T F i l g s u ( [ { 0 and, for
// the kinds that need them, y < > S and '.'. An integer that fits in
// int32 is 'i', any other integer 'l'; the encoder never writes 'I', 't'
// or 'R', nor the text forms 'f' and 'x'. Every byte string is 's' and
// every unicode string 'u' with its UTF-8 bytes. The Append functions
// write single values and container headers for callers that build
// messages without Values.
//
// # Python literals
//
// FormatPython renders a Value as a Python expression that both Python 2
// and Python 3 evaluate to the same value (and ast.literal_eval reads
// where the value allows), and ParsePython reads that language back; the
// trawl marshal command is built on them.
package marshal
