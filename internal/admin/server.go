package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/xmlrpc"
)

// Path is the HTTP path of the API (MS-FSCADM 2.2).
const Path = "/RPC2"

// FaultCode is the faultCode of every fault (MS-FSCADM 2.2.7).
const FaultCode = 1

// DefaultMaxRequest caps a request body: room for the largest
// configuration internal/config reads, escaped.
const DefaultMaxRequest = 2*config.MaxFileSize + 1<<16

// MaxFault caps a fault string: a configuration's error list fits, a name
// or value sent back whole does not.
const MaxFault = 64 << 10

// ServerOptions tune a Server. The zero value is usable.
type ServerOptions struct {
	// Logger receives one debug record per call and one warning per fault
	// caused by a backend error; nil discards.
	Logger *slog.Logger
	// MaxRequest caps a request body in bytes (DefaultMaxRequest if 0).
	MaxRequest int64
	// ConfigName names CollectionAdd's XML in configuration errors
	// ("ConfigData" if empty); relative paths in it resolve against its
	// directory.
	ConfigName string
	// ConfigOptions are passed to config.Parse for CollectionAdd.
	ConfigOptions *config.Options
	// BodyBudget caps the bytes of request bodies decoded at once, across
	// all requests (DefaultBodyBudget if 0); see budget.go.
	BodyBudget int64
	// BodyWait is how long a request waits for the budget before it is
	// refused with 503 (DefaultBodyWait if 0).
	BodyWait time.Duration
}

// Server serves the MS-FSCADM methods at Path, dispatching to a Backend.
// It is an http.Handler; it is safe for concurrent use as far as the
// Backend is.
type Server struct {
	backend       Backend
	role          Role
	log           *slog.Logger
	maxRequest    int64
	configName    string
	configOptions *config.Options
	methods       map[string]*method
	names         []string
	budget        *budget
	bodyWait      time.Duration
}

// NewServer returns a server for b.
func NewServer(b Backend, opts ServerOptions) *Server {
	s := &Server{backend: b, role: b.Role(), log: opts.Logger, maxRequest: opts.MaxRequest,
		configName: opts.ConfigName, configOptions: opts.ConfigOptions, methods: map[string]*method{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxRequest <= 0 {
		s.maxRequest = DefaultMaxRequest
	}
	if s.configName == "" {
		s.configName = "ConfigData"
	}
	if opts.BodyBudget <= 0 {
		opts.BodyBudget = DefaultBodyBudget
	}
	s.budget = newBudget(opts.BodyBudget)
	s.bodyWait = opts.BodyWait
	if s.bodyWait <= 0 {
		s.bodyWait = DefaultBodyWait
	}
	for _, m := range methodTable() {
		s.methods[m.name] = m
	}
	if _, ok := b.(Extensions); ok {
		for _, m := range extensionTable() { // extensions.go
			s.methods[m.name] = m
		}
	}
	s.addSystemMethods()
	for n := range s.methods {
		s.names = append(s.names, n)
	}
	sort.Strings(s.names)
	return s
}

// Methods returns the names of every method served, sorted.
func (s *Server) Methods() []string { return append([]string(nil), s.names...) }

// ServeHTTP answers POST /RPC2; other paths get 404 and other methods 405.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != Path {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "405 method not allowed: XML-RPC calls are POSTed to "+Path, http.StatusMethodNotAllowed)
		return
	}
	if r.ContentLength > s.maxRequest {
		s.reply(w, http.StatusOK, xmlrpc.EncodeFault(&xmlrpc.Fault{Code: FaultCode,
			String: fmt.Sprintf("bad XML-RPC request: %v: body of %d bytes, the cap is %d", xmlrpc.ErrLimit, r.ContentLength, s.maxRequest)}))
		return
	}
	var body io.Reader = http.MaxBytesReader(w, r.Body, s.maxRequest+1) // the decoder stops first, with ErrLimit
	var br *budgetReader
	if r.ContentLength >= 0 {
		if !s.budget.acquire(r.Context(), r.ContentLength, s.bodyWait) {
			s.overBudget(w, r)
			return
		}
		defer s.budget.release(r.ContentLength)
	} else {
		br = &budgetReader{ctx: r.Context(), r: body, b: s.budget, wait: s.bodyWait}
		defer func() { s.budget.release(br.held) }()
		body = br
	}
	call, err := xmlrpc.DecodeCall(body, xmlrpc.Limits{MaxBytes: s.maxRequest})
	if br != nil && br.failed {
		s.overBudget(w, r)
		return
	}
	var resp []byte
	if err != nil {
		s.log.Debug("admin: bad request", "remote", r.RemoteAddr, "err", err)
		resp = xmlrpc.EncodeFault(&xmlrpc.Fault{Code: FaultCode, String: "bad XML-RPC request: " + err.Error()})
	} else {
		resp = s.Dispatch(r.Context(), call)
	}
	s.reply(w, http.StatusOK, resp)
}

// overBudget answers a request that found no room in the body budget:
// 503 with Retry-After, and a fault for XML-RPC clients that read the body.
func (s *Server) overBudget(w http.ResponseWriter, r *http.Request) {
	s.log.Warn("admin: request refused, request body budget exhausted", "remote", r.RemoteAddr, "length", r.ContentLength)
	w.Header().Set("Retry-After", "1")
	w.Header().Set("Connection", "close")
	s.reply(w, http.StatusServiceUnavailable, xmlrpc.EncodeFault(&xmlrpc.Fault{Code: FaultCode, String: "server busy: " + errOverBudget.Error()}))
}

func (s *Server) reply(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// Dispatch runs one call and returns the response body.
func (s *Server) Dispatch(ctx context.Context, call *xmlrpc.Call) []byte {
	v, err := s.call(ctx, call)
	if err == nil {
		b, encErr := xmlrpc.EncodeResponse(v)
		if encErr == nil {
			s.log.Debug("admin: call", "method", call.Method)
			return b
		}
		err = fmt.Errorf("encoding the result: %w", encErr)
	}
	msg := err.Error()
	if len(msg) > MaxFault {
		msg = msg[:MaxFault] + "...(truncated)"
	}
	var fe *faultError
	if !errors.As(err, &fe) {
		msg = call.Method + ": " + msg
		s.log.Warn("admin: call failed", "method", call.Method, "err", err)
	} else {
		s.log.Debug("admin: call refused", "method", call.Method, "fault", msg)
	}
	return xmlrpc.EncodeFault(&xmlrpc.Fault{Code: FaultCode, String: msg})
}

func (s *Server) call(ctx context.Context, call *xmlrpc.Call) (v xmlrpc.Value, err error) {
	m, ok := s.methods[call.Method]
	if !ok {
		if call.Method == "GetNodeSchedulerXmlRpcPort" { // the spelling of 2.2.8.2's text
			m = s.methods["GetNodeSchedulerXmlRpcPorts"]
		} else {
			return nil, faultf("unknown method %q%s", config.Clip(call.Method), s.suggest(call.Method))
		}
	}
	if !variadic[m.name] {
		if err := m.check(call.Params); err != nil {
			return nil, err
		}
	}
	defer func() {
		// A backend bug must not take the admin API down.
		if r := recover(); r != nil {
			s.log.Error("admin: backend panic", "method", m.name, "panic", r)
			v, err = nil, fmt.Errorf("internal error: %v", r)
		}
	}()
	return m.call(ctx, s, args(call.Params))
}

func (s *Server) suggest(name string) string {
	if len(name) > config.MaxSuggestName {
		return ""
	}
	lower := strings.ToLower(name)
	for _, n := range s.names {
		if strings.ToLower(n) == lower {
			return fmt.Sprintf(" (did you mean %q? method names are case-sensitive)", n)
		}
	}
	return ""
}

// addSystemMethods adds the introspection methods of the XML-RPC
// introspection convention.
func (s *Server) addSystemMethods() {
	s.methods["system.listMethods"] = &method{name: "system.listMethods", returns: "array", help: "List the methods of this server.",
		call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
			out := make(xmlrpc.Array, len(s.names))
			for i, n := range s.names {
				out[i] = xmlrpc.String(n)
			}
			return out, nil
		}}
	s.methods["system.methodHelp"] = &method{name: "system.methodHelp", params: []param{p("MethodName", pString)}, returns: "string",
		help: "Describe a method: its parameters, result and MS-FSCADM section.",
		call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
			m, ok := s.methods[a.str(0)]
			if !ok {
				return nil, faultf("system.methodHelp: unknown method %q", config.Clip(a.str(0)))
			}
			return xmlrpc.String(m.describe()), nil
		}}
	s.methods["system.methodSignature"] = &method{name: "system.methodSignature", params: []param{p("MethodName", pString)}, returns: "array",
		help: "Return [[return type, parameter types...]] for a method.",
		call: func(ctx context.Context, s *Server, a args) (xmlrpc.Value, error) {
			m, ok := s.methods[a.str(0)]
			if !ok {
				return nil, faultf("system.methodSignature: unknown method %q", config.Clip(a.str(0)))
			}
			if variadic[m.name] {
				return xmlrpc.String("undef"), nil
			}
			sig := xmlrpc.Array{xmlrpc.String(m.returns)}
			for _, p := range m.params {
				sig = append(sig, xmlrpc.String(p.typ.wireType()))
			}
			return xmlrpc.Array{sig}, nil
		}}
}

func (m *method) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s(", m.name)
	for i, p := range m.params {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s", p.typ.wireType(), p.name)
	}
	fmt.Fprintf(&b, ") -> %s\n%s", m.returns, m.help)
	if m.section != "" {
		if m.section == "MS-FSCX" {
			b.WriteString("\nMS-FSCX callback (MS-FSCADM 3.3.3).")
		} else {
			fmt.Fprintf(&b, "\nMS-FSCADM %s.", m.section)
		}
	}
	return b.String()
}
