// Package nameserver is the name server of trawl's content distributors
// (MS-FSCDFT section 1.5, DESIGN.md decision 4.5): a registry of abstract
// object references (AORs: name, object_id, host, port, interface_type,
// interface_version) that distributors and indexers bind themselves in and
// resolve each other through. [MS-FSMW], which defines the real one, is not
// public; what follows is ours.
//
// # Calls
//
// The name server listens on base port + 4 and speaks internal/distrib/wire
// frames to the object "nameserver":
//
//	bind(aor)                      -> ()      already_bound if another address holds the key
//	resolve(name, type, version)   -> aor     nameserver::resolve_exception if unbound
//	unbind(name, type, version)    -> bool    whether a binding was removed
//	unbind(name, type, version, holder) -> bool  the same, only if the binding is holder (an AOR)
//	list(prefix)                   -> [aor]   every binding whose name starts with prefix
//	__ping()                       -> ()
//
// # Decisions
//
//   - A binding is keyed by (name, interface_type, interface_version), so the
//     master's session_factory and master_dispatcher share their name as
//     MS-FSCDFT 3.1.3 and 3.3.3 want.
//   - bind is bind-if-absent: it fails with nameserver::already_bound when the
//     key is held by an object at another host:port, and succeeds (replacing
//     the AOR) when it is absent or held at the same host:port, so a process
//     restarted at its address takes its names back. Two distributors that
//     start at the same instant therefore cannot both become master: the
//     second bind fails and that distributor registers as a backup
//     (MS-FSCDFT 3.4.3's last sentence). Taking a name over is explicit:
//     unbind, then bind (MS-FSCDFT 3.4.5). A distributor taking over from
//     a dead master unbinds with the master's AOR as holder, so that of two
//     backups taking over at once the slower one does not remove the
//     faster one's new binding: its unbind does nothing and its bind fails.
//   - Liveness: every PingInterval (5 s by default, a flag) the name server
//     calls __ping on each address that holds a binding; after PingFailures
//     (3) successive failures (refused, closed, or no answer within the
//     interval, at least 2 s) every binding of that address is dropped and logged.
//   - State: each bind and unbind is a record persisted before its reply is
//     sent (loop's persist-then-send), appended to DIR/bindings.log as a wire
//     frame (a one-way "bind" with the AOR or "unbind" with the key) and
//     synced; at start the log is read back (a torn last record is dropped)
//     and rewritten compacted. The bindings survive a restart; the liveness
//     check drops those whose objects did not.
//   - The same calls are behind the Registry interface, which distributors
//     and indexers use; Client implements it over the wire, and an etcd
//     registry can implement it too.
package nameserver
