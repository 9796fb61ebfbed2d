// Package admin is the MS-FSCADM administration and status API: an XML-RPC
// server (POST /RPC2 on the base port, DESIGN.md 4.3) that checks every
// call against the method table of the spec and dispatches it to a Backend,
// which the crawler roles implement, and a Go client with a typed wrapper
// per method.
//
// The server owns the protocol rules: parameter count and types, 0/1 flags,
// log level masks, hostport and contentdest syntax, the role rules
// (GetNodeSchedulerXmlRpcPorts only on a multinode scheduler, Force on a
// node scheduler of a multinode setup, IsDistributed and
// IsMultiNodeScheduler from the role), the return shapes (cresult, the
// [code, value] pairs of the statistics methods) and the fault format
// (faultCode 1, MS-FSCADM 2.2.7). CollectionAdd parses the MS-FSCCFG XML
// with internal/config, so a bad configuration gets the same messages as
// "trawl config check". The Backend only does the work. A Backend that
// also implements Extensions gets trawl's three methods beyond the spec
// (extensions.go: quarantine with requeue, a collection's state, rerouting
// a dead node scheduler's sites), whose MS-FSCMT messages MS-FSCADM never
// reaches.
//
// A Backend method reports a refusal with Refuse (the reply is the in-band
// failure of the method's return type: a cresult [0, text], SetLogLevel 0)
// and any other error as a fault. Statistics travel as the spec says: the
// flattened structures (CollectionGetStatistics2, GetGlobalStatistics) as
// XML-RPC structs, the statistics dictionaries (CollectionGetStatistics,
// CollectionGetSiteStatistics) as <base64> of their MS-FSWCU (marshal)
// bytes (DESIGN.md 4.4).
//
// Request bodies are decoded as they stream in, each within the body cap
// (ServerOptions.MaxRequest), and all of them within one server-wide
// budget of bytes (ServerOptions.BodyBudget, budget.go): a request with a
// Content-Length over the cap gets a fault before a byte is read, one that
// finds no room in the budget within ServerOptions.BodyWait gets HTTP 503
// with Retry-After and a fault body. A chunked body takes its room 64 KiB at
// a time, so many large chunked bodies at once may all wait and all be
// refused; clients that send Content-Length (every XML-RPC client we know)
// wait their turn whole.
//
// The rest of a crawler's HTTP interface lives here too, free of any role:
// Auth (an optional token or user and password in front of every handler),
// URIFiles (the directory AddURIFile and CollectionDeleteURIFile may read),
// Metrics (Prometheus metrics on a registry the caller passes in, read
// from the engine's counters at scrape time) and StatusHandler (the status
// page with its rate charts and recent errors, and its JSON).
package admin
