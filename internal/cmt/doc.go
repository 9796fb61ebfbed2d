// Package cmt implements the wire protocol of MS-FSCMT, the Crawler
// Multinode Transport Protocol spoken between the multinode scheduler, the
// node schedulers, the duplicate servers and their replicas: the frame
// codec, a typed Go struct for every message, and a connection with a
// bounded priority send queue.
//
// # Frames
//
// A connection carries a sequence of frames (2.2.1). Each frame is a
// 4-byte big-endian length N, not counting itself, followed by N bytes of
// MS-FSWCU (CPython 2 marshal, see internal/marshal) data holding the
// 2-tuple (message dictionary, priority):
//
//	offset  size  content
//	0       4     N, uint32 big-endian: length of the rest of the frame
//	4       1     '(' 0x28  tuple
//	5       4     02 00 00 00  two elements (little-endian int32, as every
//	              number inside marshal data)
//	9       ...   '{' 0x7B  the message dictionary: key, value, key, value...
//	              each key a 2-letter str such as 's' 02000000 "cm"
//	...     1     '0' 0x30  end of the dictionary
//	...     5     'i' 0x69 + int32: the priority, 0 normal or 1 high
//
// Example 4.3 of the spec, CMD_UM_DNS_REQUEST with priority 1:
//
//	00000046                                  N = 70
//	28 02000000                               (  2 elements
//	7B                                        {
//	  73 02000000 646E  73 07000000 6578616D706C65      'dn': 'example'
//	  73 02000000 636D  69 0C000000                     'cm': 12
//	  73 02000000 7374  73 0F000000 7777772E...2E636F6D 'st': 'www.contoso.com'
//	30                                        }
//	69 01000000                               1
//
// The dictionary always holds PKT_CMD ("cm"), the command code that says
// which message it is, and the keys of that message (2.2.1.1). Key order is
// free on the wire; trawl writes keys in CPython 2's order for them, so
// that the spec's examples re-encode byte for byte.
//
// # Messages
//
// Each message of 2.2.3-2.2.5 is a struct (UMURI, PPDUPAdd, ...) that
// implements Message. DecodeFrame (or a reusable Decoder) turns a frame
// body into a Frame{Priority, Message}; AppendFrame and AppendPayload
// encode. A frame whose command the spec does not define decodes to an
// *UnknownCommandError, which a Conn logs and skips; any other bad frame
// body wraps ErrMalformed. Three command codes have two shapes that differ
// by direction (CMD_UM_ADD_ROUTE, CMD_UM_START_CRAWL_IP,
// CMD_UM_CONF_STATE); each shape has its own type, chosen by the shape of
// PKT_DATA, so decoding does not depend on who receives.
//
// The PPDUP command codes are 50-61 as in the normative table of 2.2.5; the
// examples of section 4 use other numbers (DESIGN.md 4.2).
//
// One trawl extension: PPDUP_KEEPALIVE may carry PKT_EPOCH (an integer, the
// fencing epoch of a duplicate server pair, internal/dupserver "Fencing").
// It is written only when not zero, so a peer that does not use it sends
// and receives the spec's message; a decoder that does not know the key
// skips it.
//
// # Connections
//
// Conn runs one connection: a reader that splits and decodes frames
// (FrameReader, Decoder) and delivers them on a channel, and a writer that
// sends high-priority messages before normal ones, first in first out
// within each priority, batching writes until its queue drains. Pipe and
// MemNetwork connect roles in one process over the same code path as TCP.
package cmt
