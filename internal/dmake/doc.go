// Package dmake implements MS-FSFDMW, the FAST Distributed Make Worker
// protocol: the line codec, the worker and the master.
//
// # Lines
//
// Master and worker exchange lines of ASCII text over one TCP connection
// (the communication channel; the master dials the worker at base port +
// 310). A line is
//
//	"#" name *( 1*SP named-arg ) *( 1*SP arg ) *SP LF
//	named-arg = "#" name "=" ( token / b64 )      e.g. #umask=54  #tmp=scratch
//	arg       = token / b64
//	b64       = "@base64:" base64(RFC 3548 section 3, '=' padding)
//	token     = 1*( ALPHA / DIGIT / "." / "_" / "," / "=" / "/" / "+" / "-" / ":" )
//
// Names are case-sensitive and one of the 24 commands of 2.2.4-2.2.27
// (underscores restored where the spec's extraction lost them: disk_limit,
// request_heartbeat, simple_command, simple_response). Runs of SP are one
// separator. Named arguments come before the positional ones. A receiver
// decodes any "@base64:" token (missing padding tolerated); a sender
// base64-encodes every argument that is not made only of token characters,
// so paths, keys and free text always travel encoded. A blob may carry
// several parameters separated by SP (the simple_command example of 4.3
// sends "touch <path>" as one blob): Message.SplitArgs splits blobs for the
// commands whose parameters are all plain (simple_command, remove-files,
// shell); free text (info, error, finish) is never split.
//
// Three commands are followed by a data stream whose length is their last
// argument, one less than the bytes that follow (the stream ends with LF):
//
//	#stdout <task-ID> <n> LF <n bytes> LF
//	#stderr <task-ID> <n> LF <n bytes> LF          (n a signed 32-bit integer)
//	#simple_response <task-ID> <n> LF <n bytes> LF
//
// Examples (section 4, corrected single-line forms):
//
//	#shell #umask=54 30 cmd /C jsort2.exe -S 200M -T . -m -k2,2 in.12 old.12 -o out.12
//	#slot shell 30 5564
//	#finish 30 shell completed 0 @base64:VGhlIHN5c3RlbSBjYW5ub3QgZmluZCB0aGUgZmlsZSBzcGVjaWZpZWQuDQo=
//	#forget 30
//	#simple_command 14 @base64:dG91Y2ggJEZBU1RTRUFSQ0gv...
//	#simple_response 14 0
//	(LF)
//
// Limits: a line is at most MaxLine bytes and MaxTokens tokens, a data
// stream at most MaxData bytes, a task identifier at most MaxTaskID digits
// (a positive decimal integer without leading zeros). Decoder splits a byte
// stream into messages without ever buffering more than a line and a
// stream; a malformed line is reported and skipped, a data stream without
// its LF (ErrDesync) or an over-long line ends the connection.
//
// # Path names
//
// Paths (2.2.1.2) accept '/' and '\' as separators, mixed. Expand applies
// the spec's variable references with the semantics of CPython 2's
// ntpath.expandvars, which the spec's grammar transcribes: $NAME (letters,
// digits, '_', '-'), ${NAME}, $$ for '$', unknown references left in
// place, text in single quotes left alone with its quotes. Variables come
// from the worker's environment and the setenv commands of the connection.
//
// Transfer keys (2.2.1.3) are "-" path "-" a 64-bit random number in base
// 10; TransferKey and ParseTransferKey build and split them.
package dmake
