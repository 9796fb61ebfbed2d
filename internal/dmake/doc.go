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
//
// # Roles
//
// Worker and Master are internal/loop machines (Step / Ready / Advance):
// events in (a connection up or down, a line received, a tick, a job's
// result), one batch out (lines to send, dials, jobs, log lines). They own
// no goroutine, socket, file or clock. The worker's jobs (child processes,
// transfers, file operations, free-space and heartbeat measurements: the
// Job* types) run on Executor; RunWorker and RunMaster wire a machine to
// loop's driver over TCP with Codec. Traces under testdata/ drive the
// worker machine line by line (section 4's examples among them).
//
// # Decisions where the spec is silent
//
// Registry (3.2.3, 3.3.3). The configuration server of RegisterModule and
// GetModuleList ([MS-FSCX]) is not public; trawl's name server
// (internal/distrib/nameserver, or the etcd registry) stands for it. A
// worker given --nameserver (or --registry) binds the AOR
//
//	name "fdmworker/HOST:PORT", object_id "HOST:PORT", host HOST, port PORT,
//	interface_type "fdmworker", interface_version "1.0"
//
// where HOST:PORT is where masters dial it (--advertise HOST, else the
// listening host, else the machine's name); "fdmworker" is the spec's
// ModuleRegister.name, made a prefix because a name server binding is one
// object. It binds again every --rebind (10 s; a name server restarted
// without its log, or one that dropped it, gets it back) and unbinds when
// it stops cleanly. The name server's liveness pings (wire frames, "DF")
// come to the worker's own port: with a registry the worker looks at the
// first byte of each connection (waiting at most 250 ms, since a master
// may wait for the worker's #info) and answers the frames itself, __ping
// with an empty reply; lines go to the protocol as before. A master given
// --nameserver lists "fdmworker/" once, when it starts (waiting up to
// --discover-timeout for --min-workers): worker i is the i-th of the
// --worker flags followed by the bound workers in the order of their names,
// duplicates dropped. A worker that binds after the build started is not
// used by that build. A worker listens on base port + 310.
//
// Worker.
//   - One machine serves every master connection; the working directory
//     (cd), the environment (setenv), the disk limit and the task
//     identifiers belong to the connection. When a connection closes, its
//     running tasks are killed: a master that is gone cannot collect them.
//   - Every path a master names must resolve inside the worker's --data
//     directory; cd, netsink, netsource, remove-files and simple_command
//     answer #error (or log, for cd) otherwise.
//   - shell: "#shell #umask=54 <id> cmd /C <command> [args]"; the umask and
//     "cmd /C" are ignored as the spec says (merge.pyc's "umask=54" without
//     '#' is accepted). Without --allow-shell only the table programs run,
//     in table servers ("trawl table serve" children that run one program
//     after another, so that a program does not pay the binary's start:
//     tableserver.go): jsort2.exe (and jsort2) -> sort, "cobra
//     <path>\merge.pyc" -> merge, reduce.pyc -> reduce, split.pyc -> split,
//     pythontasks.pyc -> pythontasks (see internal/table); their arguments
//     are variable-expanded, '\' becomes '/', and none may leave the
//     worker's directory. With --allow-shell any other command is executed
//     directly (no shell) with its expanded arguments. The child leads its
//     own process group, has stdin open (close-stdin closes it), and its
//     stdout and stderr (the first MiB of each) are relayed as #stdout and
//     #stderr before #finish; #stderr is sent only when the child wrote to
//     stderr, since a master takes it as failure (3.2.5.7). The slot carries
//     the child's PID, the finish its exit code. A table program's slot
//     carries its server's PID, its #stderr is the program's error, its
//     exit code 1 when it failed; killing the task kills its server.
//   - remove-files: "#remove-files <id> [inputdir=<dir>] <file>..." (also
//     #inputdir= as a named argument); a missing file is not an error. On
//     POSIX unlinking a name never changes another hard link's mode, which
//     is all the mirror rule asks.
//   - simple_command runs one at a time per connection, in order. Read-only
//     means no write bit; markfile clears them. A directory_listing is
//     "size SP name LF" sorted by name, deep names relative with '/'.
//     create_builddirs' build, input and tmp names must be relative.
//   - Free disk is measured every 10 s (--disk-check); below the limit
//     (disk_limit, 2000 MB until one arrives) every running task of that
//     connection is aborted (finish aborted) and new generic-response
//     commands get #error, except remove-files, which frees space. A shell
//     command that fails (a non-zero exit) while the free disk of its
//     directory, measured when it ends, is below the limit is reported
//     aborted, not completed with its code: it most likely failed for want
//     of space (ENOSPC), and the master runs it again without counting a
//     failed run. This limit is the worker's full-disk mark: the worker
//     keeps no database, so nothing of its own can be corrupted by a full
//     disk, and it takes no --disk-low-water of its own.
//   - heartbeat_info is an MS-FSWCU dictionary {id, pid, disk_mb, load: 0,
//     tmpsize: (tmp, (bytes, files))}, base64 on the wire; task-info is
//     task_info or task_info_copy, with class names "__main__.shell_task"
//     and "__main__.remove_file_task". A shell or remove-files task's
//     task_info has what 2.2.3.6 lists: its runtime, class and type (no
//     progress: the spec gives none for them). A netsink's or netsource's
//     task_info_copy has progress, the bytes of the file part that crossed
//     the channel so far (compressed when compressed, the count the finish
//     reports), read from the running transfer when the poll comes (a
//     plain transfer moves in 1 MiB sendfile/splice chunks between
//     updates); copy_bw is progress divided by runtime, None while
//     progress is 0. A poll answered after its task was forgotten gets
//     #info. --fault-throttle-transfer slows every netsource (tests).
//   - A netsink whose key does not match sends #info, no finish, listens on
//     a new port and sends a new slot. The netsink writes under a temporary
//     name and renames when the netsource closes; both sides report the
//     bytes of the file part as it crossed the channel (compressed with
//     "compress", zlib level 1). The netsource retries its connection with
//     backoff (50 ms doubling to 2 s) until it connects or is aborted.
//
// Master.
//   - A build starts with cd <dir>, setenv LANG C, setenv LC_ALL C, the
//     build's own setenv lines and disk_limit, sent to every worker on every
//     (re)connection.
//   - A target is assigned, when all its inputs exist on a connected worker,
//     to the connected worker with a free slot (--slots, 2) that holds most
//     of its inputs; the missing ones are moved there first, each by a
//     netsink/netsource pair from the lowest-numbered connected holder. A
//     transfer counts only when both sides finished completed with equal
//     byte counts; otherwise the other side is aborted and, once both sides
//     are finished, it is tried again (5 times at most for a file and a
//     worker). #finish is always answered with #forget.
//   - A target succeeds when its shell finished completed with code 0 and
//     no #stderr came; a failed command runs again (3 runs at most, then
//     the build fails); an #error puts the target back without counting
//     it as a run and keeps that worker out of new assignments for 2 s (20
//     such errors fail the build). A worker short of disk (its #error
//     "free disk ... below the limit", or an aborted finish: the master
//     aborts no target, so the worker did, on its disk check) puts the
//     target back counting nothing, and keeps that worker out of new
//     assignments for 10 s (its disk check period): the target goes to
//     another worker, or waits for space however long that takes (up to
//     --build-timeout); a transfer refused or aborted for want of disk is
//     tried again without counting it either.
//   - Files nobody needs: once no unfinished target reads a file, every copy
//     is removed (remove-files), except the kept copy and the initial copies
//     the build file placed. An output no target reads (a product of the
//     build) and no keep line names stays where it was made. Kept files are moved to their worker once every
//     target is done; then finish-tasks goes to every worker and the build
//     ends when all acknowledged and every removal finished.
//   - request_heartbeat goes to each worker every --heartbeat (15 s); any
//     line from a worker counts as a sign of life. A worker silent for
//     --heartbeat-timeout (900 s) is given up: its connection is closed,
//     its running targets go to others, the files only it held are
//     forgotten, and the targets that produced them, when still needed, run
//     again (recursively). A lost connection is redialled every second; the
//     targets running there are put back at once (the worker killed them),
//     and its files wait for it until the heartbeat timeout. An initial file
//     lost with its workers fails the build.
//   - The build timeout (3.2.2.3) is --build-timeout, none by default: a
//     build whose kept file's worker never comes back waits for it.
//   - Restart: the master keeps no state on disk. A restarted master runs
//     the whole build again from the initial files: the old connections'
//     tasks were killed by the workers when the old master died, every
//     output is written under a temporary name and renamed when complete,
//     and every transfer overwrites its destination, so a re-run never
//     reads a partial file and never yields a wrong output; it only costs
//     the time of the work done before.
//   - Split network, a build fence: there is no master election (one
//     master process per build, started by the operator), so a split cannot
//     make a standby promote itself. A worker cut from the master kills the
//     tasks of that connection when the connection closes, and the master
//     gives the worker up after the heartbeat timeout and runs its targets
//     elsewhere; a half-open connection (no FIN, no RST) keeps the
//     worker's tasks running until the master's connection is closed.
//     Two masters exist only if an operator starts a second one (or a
//     master restarted while its old connection lingers) for the same
//     directory. Each trawl dmake run makes a random build id and sends it
//     with cd as the named argument "#cd #build=<id> <dir>" (ours; the
//     spec's framing puts named arguments before arguments, and cd has no
//     response). The worker pins the directory to the build of the first
//     connection that cds there (or runs a task there; a cd without #build
//     counts as a build of its own connection). A connection of another
//     build in that directory gets #error "directory ... is in use by
//     build ... of another master" for every task (shell, netsink,
//     netsource, remove-files, simple_command) for as long as the pinning
//     connection is open; when it closes, the pin passes to another open
//     connection of the same build in that directory, or is free, and the
//     waiting master's next task there is accepted without another cd. A
//     connection of the same build (a master that dialled again) shares the
//     pin. The refused master treats the error as any task error: the
//     target runs again after the worker's 2 s cooldown, and after 20 such
//     errors (about 40 s) its build fails with "could not run". Only the
//     same directory is pinned: a build in a subdirectory of another's is
//     not refused.
//
// # Build files
//
// A build file is lines of directives; '#' starts a comment; the lines of a
// target are indented:
//
//	dir build                       working directory on every worker (relative to --data)
//	setenv NAME VALUE               sent after LANG=C and LC_ALL=C
//	disk_limit 100                  sent with disk_limit (MB)
//	file data.txt 0 2               data.txt is on workers 0 and 2 before the build
//	target sort0                    a task: its inputs, outputs and command
//	  in part.0
//	  out sorted.0
//	  run jsort2.exe -S 200M -T . -k1,1 part.0 -o sorted.0
//	keep sorted.0 1                 at the end sorted.0 is on worker 1
//
// Each output has one producer; every input is an initial file or some
// target's output; cycles are refused. The run line is sent as the shell
// command after "cmd /C", its words as they are.
package dmake
