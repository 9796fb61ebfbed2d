package admin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/xmlrpc"
)

// ptype is the type of a method parameter.
type ptype int

const (
	pString   ptype = iota + 1 // string
	pInt                       // int (32-bit)
	pFlag                      // int 0 or 1 (a boolean is accepted too)
	pStrings                   // array of strings
	pHostPort                  // hostport string: host or host:port
	pDest                      // contentdest string
)

func (t ptype) String() string {
	switch t {
	case pString:
		return "string"
	case pInt:
		return "int"
	case pFlag:
		return "int (0 or 1)"
	case pStrings:
		return "array of strings"
	case pHostPort:
		return "hostport string"
	case pDest:
		return "contentdest string"
	}
	return "?"
}

// wireType is the XML-RPC type name of t, for system.methodSignature.
func (t ptype) wireType() string {
	switch t {
	case pInt, pFlag:
		return "int"
	case pStrings:
		return "array"
	}
	return "string"
}

type param struct {
	name string
	typ  ptype
}

// args are the checked parameters of a call.
type args []xmlrpc.Value

func (a args) str(i int) string { s, _ := a[i].(xmlrpc.String); return string(s) }
func (a args) int(i int) int {
	switch v := a[i].(type) {
	case xmlrpc.Int:
		return int(v)
	case xmlrpc.Bool:
		if v {
			return 1
		}
	}
	return 0
}
func (a args) flag(i int) bool { return a.int(i) == 1 }
func (a args) strs(i int) []string {
	arr, _ := a[i].(xmlrpc.Array)
	out := make([]string, len(arr))
	for j, v := range arr {
		s, _ := v.(xmlrpc.String)
		out[j] = string(s)
	}
	return out
}

// method is one entry of the method table.
type method struct {
	name    string
	section string // MS-FSCADM section ("MS-FSCX" for the configuration callbacks)
	params  []param
	returns string // XML-RPC return type
	help    string
	call    func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error)
}

// faultError is an error the server sends as a fault with exactly this
// text.
type faultError struct{ msg string }

func (e *faultError) Error() string { return e.msg }

func faultf(format string, args ...any) error {
	return &faultError{msg: fmt.Sprintf(format, args...)}
}

// check validates the parameters against m.params.
func (m *method) check(ps []xmlrpc.Value) error {
	if len(ps) != len(m.params) {
		return faultf("%s: takes %d parameters (%s), got %d", m.name, len(m.params), m.paramList(), len(ps))
	}
	for i, p := range m.params {
		if err := checkParam(p, ps[i]); err != nil {
			return faultf("%s: parameter %d (%s): %v", m.name, i+1, p.name, err)
		}
	}
	return nil
}

func (m *method) paramList() string {
	if len(m.params) == 0 {
		return "none"
	}
	l := make([]string, len(m.params))
	for i, p := range m.params {
		l[i] = p.name + " " + p.typ.String()
	}
	return strings.Join(l, ", ")
}

func checkParam(p param, v xmlrpc.Value) error {
	want := func() error { return fmt.Errorf("want %s, got %s", p.typ, v.TypeName()) }
	switch p.typ {
	case pString, pHostPort, pDest:
		s, ok := v.(xmlrpc.String)
		if !ok {
			return want()
		}
		switch p.typ {
		case pHostPort:
			return checkHostPort(string(s))
		case pDest:
			return checkDest(string(s))
		}
	case pInt:
		n, ok := v.(xmlrpc.Int)
		if !ok {
			return want()
		}
		if n < math.MinInt32 || n > math.MaxInt32 {
			return fmt.Errorf("%d does not fit in a 32-bit int", n)
		}
	case pFlag:
		switch n := v.(type) {
		case xmlrpc.Bool:
		case xmlrpc.Int:
			if n != 0 && n != 1 {
				return fmt.Errorf("must be 0 or 1, got %d", n)
			}
		default:
			return want()
		}
	case pStrings:
		arr, ok := v.(xmlrpc.Array)
		if !ok {
			return want()
		}
		for j, e := range arr {
			if _, ok := e.(xmlrpc.String); !ok {
				return fmt.Errorf("element %d is %s, want string", j+1, e.TypeName())
			}
		}
	}
	return nil
}

// checkHostPort accepts "host", "host:port" and "[v6]:port" (2.2.2.2); the
// port, when given, must be 1-65535.
func checkHostPort(s string) error {
	if s == "" || strings.ContainsAny(s, " \t\r\n/") {
		return fmt.Errorf("%q is not a hostport (host:port)", config.Clip(s))
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if strings.Count(s, ":") > 1 && !strings.HasPrefix(s, "[") {
			return fmt.Errorf("%q: an IPv6 address must be in brackets", config.Clip(s))
		}
		if strings.Contains(s, ":") && !strings.HasPrefix(s, "[") {
			return fmt.Errorf("%q is not a hostport (host:port)", config.Clip(s))
		}
		host = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
		port = ""
	}
	if host == "" {
		return fmt.Errorf("%q has no host name", config.Clip(s))
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q: bad port %q", config.Clip(s), config.Clip(port))
		}
	}
	return nil
}

// checkDest accepts "", a destination name and "default:<collection>"
// (2.2.2.3).
func checkDest(s string) error {
	if rest, ok := strings.CutPrefix(s, "default:"); ok && rest == "" {
		return fmt.Errorf("%q names no content collection", config.Clip(s))
	}
	if strings.ContainsAny(s, "\r\n\t") {
		return fmt.Errorf("%q is not a content destination", config.Clip(s))
	}
	return nil
}

func p(name string, t ptype) param { return param{name, t} }

var (
	collParam = p("Collection", pString)
	siteParam = p("Site", pHostPort)
	destParam = p("Destination", pDest)
)

// cresult turns a backend's (text, error) into a cresult value.
func cresult(text string, err error) (xmlrpc.Value, error) {
	var r *RefusedError
	if errors.As(err, &r) {
		return xmlrpc.Array{xmlrpc.Int(0), xmlrpc.String(r.Msg)}, nil
	}
	if err != nil {
		return nil, err
	}
	return xmlrpc.Array{xmlrpc.Int(1), xmlrpc.String(text)}, nil
}

func boolInt(b bool) xmlrpc.Value {
	if b {
		return xmlrpc.Int(1)
	}
	return xmlrpc.Int(0)
}

// cresultMethod builds a method whose backend call returns cresult text.
func cresultMethod(name, section, help string, params []param, f func(ctx context.Context, b Backend, a args) (string, error)) *method {
	return &method{name: name, section: section, params: params, returns: "array", help: help,
		call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
			return cresult(f(ctx, s.backend, a))
		}}
}

// methodTable returns every method of MS-FSCADM 2.2.8-2.2.10 and the three
// MS-FSCX callbacks of 3.3.3.
func methodTable() []*method {
	ms := []*method{
		{name: "GetLogLevel", section: "2.2.8.1", returns: "int", help: "Return the log level bitmask (4 info, 8 debug, 16 warning, 32 error, 64 critical, 128 verbose).",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				l, err := s.backend.GetLogLevel(ctx)
				return xmlrpc.Int(l), err
			}},
		{name: "GetNodeSchedulerXmlRpcPorts", section: "2.2.8.2", returns: "array", help: "List the [hostname, port] admin addresses of the registered node schedulers (multinode scheduler only).",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				if s.role != MultinodeScheduler {
					return nil, faultf("GetNodeSchedulerXmlRpcPorts: this crawler is a %s, not a multinode scheduler", s.role)
				}
				hps, err := s.backend.NodeSchedulers(ctx)
				if err != nil {
					return nil, err
				}
				if len(hps) == 0 {
					return nil, faultf("GetNodeSchedulerXmlRpcPorts: no node scheduler is registered")
				}
				out := make(xmlrpc.Array, len(hps))
				for i, h := range hps {
					out[i] = xmlrpc.Array{xmlrpc.String(h.Host), xmlrpc.Int(h.Port)}
				}
				return out, nil
			}},
		{name: "GetSiteManagerNum", section: "2.2.8.3", returns: "int", help: "Return the number of site managers of this node (0 on a multinode scheduler).",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				if s.role == MultinodeScheduler {
					return xmlrpc.Int(0), nil
				}
				n, err := s.backend.SiteManagerNum(ctx)
				return xmlrpc.Int(n), err
			}},
		{name: "IsDistributed", section: "2.2.8.4", returns: "int", help: "Return 1 if the crawler is part of a multinode setup, else 0.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				return boolInt(s.role != Standalone), nil
			}},
		{name: "IsMultiNodeScheduler", section: "2.2.8.5", returns: "int", help: "Return 1 on a multinode scheduler, 0 on a node scheduler.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				return boolInt(s.role == MultinodeScheduler), nil
			}},
		{name: "SetLogLevel", section: "2.2.8.6", params: []param{p("Level", pInt)}, returns: "int",
			help: "Set the log level bitmask (bits 0x04-0x80); return 1 on success, 0 otherwise. A multinode scheduler forwards it to every node scheduler.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				l := a.int(0)
				if l == 0 || l&^LogMask != 0 {
					return xmlrpc.Int(0), nil
				}
				err := s.backend.SetLogLevel(ctx, l)
				var r *RefusedError
				if errors.As(err, &r) {
					return xmlrpc.Int(0), nil
				}
				if err != nil {
					return nil, err
				}
				return xmlrpc.Int(1), nil
			}},

		cresultMethod("AddURIs", "2.2.9.1", "Add absolute URIs to the crawl queue; Urgent 1 crawls them as soon as possible.",
			[]param{collParam, p("Urgent", pFlag), p("URIs", pStrings)},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.AddURIs(ctx, a.str(0), a.flag(1), a.strs(2))
			}),
		cresultMethod("AddURIFile", "2.2.9.2", "Add the URIs of a server-local UTF-8 file (one absolute URI per line) to the crawl queue.",
			[]param{collParam, p("Urgent", pFlag), p("URIFile", pString)},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.AddURIFile(ctx, a.str(0), a.flag(1), a.str(2))
			}),
		{name: "CollectionAdd", section: "2.2.9.3", params: []param{p("ConfigData", pString), p("Force", pFlag)}, returns: "array",
			help: "Add a collection, or update an existing one, from MS-FSCCFG XML (a partial configuration is merged). A node scheduler of a multinode setup needs Force 1.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				force := a.flag(1)
				if s.role == NodeScheduler && !force {
					return nil, faultf("CollectionAdd: this node scheduler is part of a multinode setup; add collections on the multinode scheduler, or set Force to 1")
				}
				data := []byte(a.str(0))
				// Parsed as a partial configuration: the backend merges it
				// into the existing collection, or into the defaults for a
				// new one, and checks the result as a whole.
				var opts config.Options
				if s.configOptions != nil {
					opts = *s.configOptions
				}
				opts.Partial = true
				cfg, err := config.Parse(s.configName, data, &opts)
				if err != nil {
					return nil, faultf("CollectionAdd: invalid configuration:\n%v", err)
				}
				if len(cfg.Collections) == 0 {
					return nil, faultf("CollectionAdd: the configuration holds no collection (DomainSpecification)")
				}
				return cresult(s.backend.CollectionAdd(ctx, cfg, data, force))
			}},
		{name: "CollectionDelete", section: "2.2.9.4", params: []param{collParam, p("Force", pFlag)}, returns: "array",
			help: "Delete a collection and all its data. A node scheduler of a multinode setup needs Force 1.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				force := a.flag(1)
				if s.role == NodeScheduler && !force {
					return nil, faultf("CollectionDelete: this node scheduler is part of a multinode setup; delete collections on the multinode scheduler, or set Force to 1")
				}
				return cresult(s.backend.CollectionDelete(ctx, a.str(0), force))
			}},
		cresultMethod("CollectionDeleteSite", "2.2.9.5", "Delete a site from the crawler store and the index.",
			[]param{collParam, siteParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionDeleteSite(ctx, a.str(0), a.str(1))
			}),
		cresultMethod("CollectionDeleteURIs", "2.2.9.6", "Delete absolute URIs from the crawler store and the index.",
			[]param{collParam, p("URIs", pStrings)},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionDeleteURIs(ctx, a.str(0), a.strs(1))
			}),
		cresultMethod("CollectionDeleteURIFile", "2.2.9.7", "Delete the URIs of a server-local file from the crawler store and the index.",
			[]param{collParam, p("URIFile", pString)},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionDeleteURIFile(ctx, a.str(0), a.str(1))
			}),
		{name: "CollectionGetConfigurationXML", section: "2.2.9.8", params: []param{collParam}, returns: "string",
			help: "Return a collection's configuration as MS-FSCCFG XML.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				x, err := s.backend.CollectionGetConfigurationXML(ctx, a.str(0))
				return xmlrpc.String(x), err
			}},
		{name: "CollectionGetList", section: "2.2.9.9", returns: "array", help: "List the configured collections.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				l, err := s.backend.CollectionGetList(ctx)
				if err != nil {
					return nil, err
				}
				out := make(xmlrpc.Array, len(l))
				for i, c := range l {
					out[i] = xmlrpc.String(c)
				}
				return out, nil
			}},
		{name: "CollectionGetSiteRoutingAddress", section: "2.2.9.10", params: []param{collParam, siteParam}, returns: "array",
			help: "Return [1, [hostname, port]]: the node scheduler a site is routed to.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				hp, err := s.backend.CollectionGetSiteRoutingAddress(ctx, a.str(0), a.str(1))
				var r *RefusedError
				if errors.As(err, &r) {
					return xmlrpc.Array{xmlrpc.Int(0), xmlrpc.String(r.Msg)}, nil
				}
				if err != nil {
					return nil, err
				}
				return xmlrpc.Array{xmlrpc.Int(1), xmlrpc.Array{xmlrpc.String(hp.Host), xmlrpc.Int(hp.Port)}}, nil
			}},
		cresultMethod("CollectionPreemptSite", "2.2.9.11", "Stop crawling a site now; it is crawled again later.",
			[]param{collParam, siteParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionPreemptSite(ctx, a.str(0), a.str(1))
			}),
		cresultMethod("CollectionQuarantineSite", "2.2.9.12", "Suspend crawling of a site for Time seconds; its URIs wait on a separate queue.",
			[]param{collParam, siteParam, p("Time", pInt)},
			func(ctx context.Context, b Backend, a args) (string, error) {
				if a.int(2) < 0 {
					return "", faultf("CollectionQuarantineSite: parameter 3 (Time): must not be negative, got %d", a.int(2))
				}
				return b.CollectionQuarantineSite(ctx, a.str(0), a.str(1), a.int(2))
			}),
		cresultMethod("CollectionRefetch", "2.2.9.13", "Refetch the whole collection, or only the subcollection named (\"\" for all).",
			[]param{collParam, p("SubCollection", pString)},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionRefetch(ctx, a.str(0), a.str(1))
			}),
		cresultMethod("CollectionRefetchURI", "2.2.9.14", "Refetch a URI; Refeed 1 feeds it even if unchanged, Site 1 refetches its whole site, Immediately 1 makes it urgent.",
			[]param{collParam, p("URI", pString), p("Refeed", pFlag), p("Site", pFlag), p("Immediately", pFlag)},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionRefetchURI(ctx, a.str(0), a.str(1), a.flag(2), a.flag(3), a.flag(4))
			}),
		cresultMethod("CollectionReprocessSite", "2.2.9.15", "Send every known document of a site to the indexer again.",
			[]param{collParam, destParam, siteParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionReprocessSite(ctx, a.str(0), a.str(1), a.str(2))
			}),
		cresultMethod("CollectionReprocessSitePrefix", "2.2.9.16", "Send the known documents of a site whose URI starts with Prefix to the indexer again.",
			[]param{collParam, siteParam, p("Prefix", pString), destParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionReprocessSitePrefix(ctx, a.str(0), a.str(1), a.str(2), a.str(3))
			}),
		cresultMethod("CollectionReprocessURI", "2.2.9.17", "Send the listed documents to the indexer again.",
			[]param{collParam, destParam, p("URIs", pStrings)},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionReprocessURI(ctx, a.str(0), a.str(1), a.strs(2))
			}),
		cresultMethod("CollectionResume", "2.2.9.18", "Resume crawling a suspended collection.",
			[]param{collParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionResume(ctx, a.str(0))
			}),
		cresultMethod("CollectionResumeFeeding", "2.2.9.19", "Resume sending content to the indexer (\"\" for the default destination).",
			[]param{collParam, destParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionResumeFeeding(ctx, a.str(0), a.str(1))
			}),
		cresultMethod("CollectionSuspend", "2.2.9.20", "Suspend crawling a collection.",
			[]param{collParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionSuspend(ctx, a.str(0))
			}),
		cresultMethod("CollectionSuspendFeeding", "2.2.9.21", "Suspend sending content to the indexer.",
			[]param{collParam, destParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionSuspendFeeding(ctx, a.str(0), a.str(1))
			}),
		cresultMethod("CollectionDisableRefreshOnly", "2.2.10.1", "Crawl new content again, not only previously crawled content.",
			[]param{collParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionDisableRefreshOnly(ctx, a.str(0))
			}),
		cresultMethod("CollectionEnableRefreshOnly", "2.2.10.2", "Only revisit previously crawled content (crawl mode Refreshing(limit=user)).",
			[]param{collParam},
			func(ctx context.Context, b Backend, a args) (string, error) {
				return b.CollectionEnableRefreshOnly(ctx, a.str(0))
			}),
		{name: "CollectionGetStatus", section: "2.2.10.3", params: []param{collParam}, returns: "string",
			help: "Return the collection status: crawling, suspended, compacting or zombie.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				st, err := s.backend.CollectionGetStatus(ctx, a.str(0))
				if err != nil {
					return nil, err
				}
				return xmlrpc.String(st.Code()), nil
			}},
		{name: "CollectionGetSiteStatistics", section: "2.2.10.4", params: []param{collParam, p("Site", pString)}, returns: "base64",
			help: "Return a site's statistics dictionary, MS-FSWCU (marshal) bytes in base64.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				st, err := s.backend.CollectionGetSiteStatistics(ctx, a.str(0), a.str(1))
				return marshalStats(st, err)
			}},
		{name: "CollectionGetStatistics", section: "2.2.10.5", params: []param{collParam}, returns: "base64",
			help: "Return the statistics dictionary of a collection (\"\" for all) with the global statistics, MS-FSWCU (marshal) bytes in base64.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				st, err := s.backend.CollectionGetStatistics(ctx, a.str(0))
				return marshalStats(st, err)
			}},
		{name: "CollectionGetStatistics2", section: "2.2.10.6", params: []param{collParam}, returns: "array",
			help: "Return [1, {cur, prev, complete}]: the flattened statistics of the current and previous refresh cycles and of the collection's life.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				rep, err := s.backend.CollectionGetStatistics2(ctx, a.str(0))
				if v, done, err := inBand(err); done {
					return v, err
				}
				if rep == nil {
					rep = &CollectionReport{}
				}
				out := xmlrpc.Struct{{Name: "cur", Value: flatStruct(rep.Cur)}}
				if rep.Prev != nil {
					out = append(out, xmlrpc.Member{Name: "prev", Value: flatStruct(rep.Prev)})
				}
				out = append(out, xmlrpc.Member{Name: "complete", Value: flatStruct(rep.Complete)})
				return xmlrpc.Array{xmlrpc.Int(1), out}, nil
			}},
		{name: "GetGlobalStatistics", section: "2.2.10.7", returns: "array",
			help: "Return [1, {delta, complete}]: the flattened global (DNS) statistics of the last minutes and of the crawler's life.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				rep, err := s.backend.GetGlobalStatistics(ctx)
				if v, done, err := inBand(err); done {
					return v, err
				}
				if rep == nil {
					rep = &GlobalReport{}
				}
				var out xmlrpc.Struct
				if rep.Delta != nil {
					out = append(out, xmlrpc.Member{Name: "delta", Value: globalStruct(rep.Delta)})
				}
				out = append(out, xmlrpc.Member{Name: "complete", Value: globalStruct(rep.Complete)})
				return xmlrpc.Array{xmlrpc.Int(1), out}, nil
			}},

		{name: "ping", section: "MS-FSCX", returns: "int", help: "Liveness check for the configuration service; returns 1.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				return xmlrpc.Int(1), nil
			}},
		{name: "ConfigurationChanged", section: "MS-FSCX", returns: "int", help: "Tell the crawler its configuration changed; it rereads it. Returns 1. Any parameters are ignored.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				if err := s.backend.ConfigurationChanged(ctx); err != nil {
					return nil, err
				}
				return xmlrpc.Int(1), nil
			}},
		{name: "ReRegister", section: "MS-FSCX", returns: "int", help: "Ask the crawler to register with the configuration service again. Returns 1. Any parameters are ignored.",
			call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
				if err := s.backend.ReRegister(ctx); err != nil {
					return nil, err
				}
				return xmlrpc.Int(1), nil
			}},
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
	return ms
}

// variadic lists the methods whose parameters are not checked: the MS-FSCX
// callbacks, whose signatures MS-FSCX (not public) defines.
var variadic = map[string]bool{"ConfigurationChanged": true, "ReRegister": true}

// inBand turns a Refuse error into the [0, text] failure of the
// statistics methods; other errors stay errors. done reports whether the
// call is answered.
func inBand(err error) (xmlrpc.Value, bool, error) {
	var r *RefusedError
	if errors.As(err, &r) {
		return xmlrpc.Array{xmlrpc.Int(0), xmlrpc.String(r.Msg)}, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	return nil, false, nil
}
