package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/xmlrpc"
)

// DefaultMaxResponse caps a response body (statistics of many collections
// can be large).
const DefaultMaxResponse = 256 << 20

// Error is a call that the server answered with a fault or an in-band
// failure.
type Error struct {
	Method string
	// Fault is true for an XML-RPC fault, false for an in-band failure
	// (a cresult or [code, text] whose code is below 1).
	Fault bool
	Code  int
	Msg   string
}

func (e *Error) Error() string {
	if e.Fault {
		return "admin: " + e.Msg
	}
	return fmt.Sprintf("admin: %s failed: %s", e.Method, e.Msg)
}

// Client calls the MS-FSCADM methods of one server.
type Client struct {
	url  string
	http *http.Client
	// MaxResponse caps a response body (DefaultMaxResponse if 0).
	MaxResponse int64
}

// NewClient returns a client of the server at addr: "host:port" (the API
// is at http://host:port/RPC2) or a full http:// URL. A nil hc means
// http.DefaultClient.
func NewClient(addr string, hc *http.Client) *Client {
	u := addr
	if !strings.Contains(addr, "://") {
		u = "http://" + addr + Path
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{url: u, http: hc}
}

// URL returns the URL the client posts to.
func (c *Client) URL() string { return c.url }

// Call calls method with params and returns its result. A fault is
// returned as an *Error.
func (c *Client) Call(ctx context.Context, method string, params ...xmlrpc.Value) (xmlrpc.Value, error) {
	body, err := xmlrpc.EncodeCall(method, params...)
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %w", method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	req.Header.Set("Content-Type", "text/xml")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %w", method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("admin: %s: HTTP %s from %s: %s", method, resp.Status, c.url, strings.TrimSpace(string(msg)))
	}
	max := c.MaxResponse
	if max <= 0 {
		max = DefaultMaxResponse
	}
	v, err := xmlrpc.DecodeResponse(resp.Body, xmlrpc.Limits{MaxBytes: max})
	var f *xmlrpc.Fault
	if errors.As(err, &f) {
		return nil, &Error{Method: method, Fault: true, Code: f.Code, Msg: f.String}
	}
	if err != nil {
		return nil, fmt.Errorf("admin: %s: reading the response: %w", method, err)
	}
	return v, nil
}

// Status reads the server's status report (GET status.json next to the
// API; not an MS-FSCADM method): what trawl admin chain prints.
func (c *Client) Status(ctx context.Context) (*StatusReport, error) {
	u := strings.TrimSuffix(c.url, Path) + "/status.json"
	if !strings.HasSuffix(c.url, Path) {
		u = strings.TrimRight(c.url, "/") + "/status.json"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin: status: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("admin: status: HTTP %s from %s: %s", resp.Status, u, strings.TrimSpace(string(msg)))
	}
	max := c.MaxResponse
	if max <= 0 {
		max = DefaultMaxResponse
	}
	var rep StatusReport
	if err := json.NewDecoder(io.LimitReader(resp.Body, max)).Decode(&rep); err != nil {
		return nil, fmt.Errorf("admin: status: %s: %w", u, err)
	}
	return &rep, nil
}

func badResult(method string, v xmlrpc.Value) error {
	return fmt.Errorf("admin: %s: unexpected result of type %s", method, v.TypeName())
}

func (c *Client) callInt(ctx context.Context, method string, params ...xmlrpc.Value) (int, error) {
	v, err := c.Call(ctx, method, params...)
	if err != nil {
		return 0, err
	}
	switch n := v.(type) {
	case xmlrpc.Int:
		return int(n), nil
	case xmlrpc.Bool:
		if n {
			return 1, nil
		}
		return 0, nil
	}
	return 0, badResult(method, v)
}

// pair splits a [code, value] result; a code below 1 is an *Error with the
// text of value.
func pair(method string, v xmlrpc.Value) (xmlrpc.Value, error) {
	a, ok := v.(xmlrpc.Array)
	if !ok || len(a) != 2 {
		return nil, badResult(method, v)
	}
	code, ok := a[0].(xmlrpc.Int)
	if !ok {
		return nil, badResult(method, v)
	}
	if code < 1 {
		msg, _ := a[1].(xmlrpc.String)
		return nil, &Error{Method: method, Code: int(code), Msg: string(msg)}
	}
	return a[1], nil
}

// cresult calls a method returning a cresult and returns its text.
func (c *Client) cresult(ctx context.Context, method string, params ...xmlrpc.Value) (string, error) {
	v, err := c.Call(ctx, method, params...)
	if err != nil {
		return "", err
	}
	r, err := pair(method, v)
	if err != nil {
		return "", err
	}
	s, ok := r.(xmlrpc.String)
	if !ok {
		return "", badResult(method, v)
	}
	return string(s), nil
}

func flag(b bool) xmlrpc.Value {
	if b {
		return xmlrpc.Int(1)
	}
	return xmlrpc.Int(0)
}

func strs(l []string) xmlrpc.Array {
	a := make(xmlrpc.Array, len(l))
	for i, s := range l {
		a[i] = xmlrpc.String(s)
	}
	return a
}

// GetLogLevel returns the log level bitmask.
func (c *Client) GetLogLevel(ctx context.Context) (int, error) {
	return c.callInt(ctx, "GetLogLevel")
}

// SetLogLevel sets the log level bitmask; a refusal (0) is an *Error.
func (c *Client) SetLogLevel(ctx context.Context, level int) error {
	n, err := c.callInt(ctx, "SetLogLevel", xmlrpc.Int(level))
	if err != nil {
		return err
	}
	if n != 1 {
		return &Error{Method: "SetLogLevel", Code: n, Msg: fmt.Sprintf("log level %#x not set", level)}
	}
	return nil
}

// GetNodeSchedulerXmlRpcPorts lists the node schedulers of a multinode
// scheduler.
func (c *Client) GetNodeSchedulerXmlRpcPorts(ctx context.Context) ([]HostPort, error) {
	const m = "GetNodeSchedulerXmlRpcPorts"
	v, err := c.Call(ctx, m)
	if err != nil {
		return nil, err
	}
	a, ok := v.(xmlrpc.Array)
	if !ok {
		return nil, badResult(m, v)
	}
	out := make([]HostPort, 0, len(a))
	for _, e := range a {
		hp, err := hostPort(m, e)
		if err != nil {
			return nil, err
		}
		out = append(out, hp)
	}
	return out, nil
}

func hostPort(method string, v xmlrpc.Value) (HostPort, error) {
	a, ok := v.(xmlrpc.Array)
	if !ok || len(a) != 2 {
		return HostPort{}, badResult(method, v)
	}
	h, ok1 := a[0].(xmlrpc.String)
	p, ok2 := a[1].(xmlrpc.Int)
	if !ok1 || !ok2 {
		return HostPort{}, badResult(method, v)
	}
	return HostPort{Host: string(h), Port: int(p)}, nil
}

// GetSiteManagerNum returns the number of site managers.
func (c *Client) GetSiteManagerNum(ctx context.Context) (int, error) {
	return c.callInt(ctx, "GetSiteManagerNum")
}

// IsDistributed reports whether the server is part of a multinode setup.
func (c *Client) IsDistributed(ctx context.Context) (bool, error) {
	n, err := c.callInt(ctx, "IsDistributed")
	return n == 1, err
}

// IsMultiNodeScheduler reports whether the server is a multinode scheduler.
func (c *Client) IsMultiNodeScheduler(ctx context.Context) (bool, error) {
	n, err := c.callInt(ctx, "IsMultiNodeScheduler")
	return n == 1, err
}

// AddURIs queues URIs.
func (c *Client) AddURIs(ctx context.Context, collection string, urgent bool, uris []string) (string, error) {
	return c.cresult(ctx, "AddURIs", xmlrpc.String(collection), flag(urgent), strs(uris))
}

// AddURIFile queues the URIs of a file on the server.
func (c *Client) AddURIFile(ctx context.Context, collection string, urgent bool, path string) (string, error) {
	return c.cresult(ctx, "AddURIFile", xmlrpc.String(collection), flag(urgent), xmlrpc.String(path))
}

// CollectionAdd adds or updates collections from MS-FSCCFG XML.
func (c *Client) CollectionAdd(ctx context.Context, configXML string, force bool) (string, error) {
	return c.cresult(ctx, "CollectionAdd", xmlrpc.String(configXML), flag(force))
}

// CollectionDelete deletes a collection.
func (c *Client) CollectionDelete(ctx context.Context, collection string, force bool) (string, error) {
	return c.cresult(ctx, "CollectionDelete", xmlrpc.String(collection), flag(force))
}

// CollectionDeleteSite deletes a site.
func (c *Client) CollectionDeleteSite(ctx context.Context, collection, site string) (string, error) {
	return c.cresult(ctx, "CollectionDeleteSite", xmlrpc.String(collection), xmlrpc.String(site))
}

// CollectionDeleteURIs deletes URIs.
func (c *Client) CollectionDeleteURIs(ctx context.Context, collection string, uris []string) (string, error) {
	return c.cresult(ctx, "CollectionDeleteURIs", xmlrpc.String(collection), strs(uris))
}

// CollectionDeleteURIFile deletes the URIs of a file on the server.
func (c *Client) CollectionDeleteURIFile(ctx context.Context, collection, path string) (string, error) {
	return c.cresult(ctx, "CollectionDeleteURIFile", xmlrpc.String(collection), xmlrpc.String(path))
}

// CollectionGetConfigurationXML returns a collection's configuration.
func (c *Client) CollectionGetConfigurationXML(ctx context.Context, collection string) (string, error) {
	const m = "CollectionGetConfigurationXML"
	v, err := c.Call(ctx, m, xmlrpc.String(collection))
	if err != nil {
		return "", err
	}
	s, ok := v.(xmlrpc.String)
	if !ok {
		return "", badResult(m, v)
	}
	return string(s), nil
}

// CollectionGetList lists the collections.
func (c *Client) CollectionGetList(ctx context.Context) ([]string, error) {
	return c.stringList(ctx, "CollectionGetList")
}

func (c *Client) stringList(ctx context.Context, m string, params ...xmlrpc.Value) ([]string, error) {
	v, err := c.Call(ctx, m, params...)
	if err != nil {
		return nil, err
	}
	a, ok := v.(xmlrpc.Array)
	if !ok {
		return nil, badResult(m, v)
	}
	out := make([]string, 0, len(a))
	for _, e := range a {
		s, ok := e.(xmlrpc.String)
		if !ok {
			return nil, badResult(m, v)
		}
		out = append(out, string(s))
	}
	return out, nil
}

// CollectionGetSiteRoutingAddress returns the node scheduler of a site.
func (c *Client) CollectionGetSiteRoutingAddress(ctx context.Context, collection, site string) (HostPort, error) {
	const m = "CollectionGetSiteRoutingAddress"
	v, err := c.Call(ctx, m, xmlrpc.String(collection), xmlrpc.String(site))
	if err != nil {
		return HostPort{}, err
	}
	r, err := pair(m, v)
	if err != nil {
		return HostPort{}, err
	}
	return hostPort(m, r)
}

// CollectionPreemptSite stops crawling a site for now.
func (c *Client) CollectionPreemptSite(ctx context.Context, collection, site string) (string, error) {
	return c.cresult(ctx, "CollectionPreemptSite", xmlrpc.String(collection), xmlrpc.String(site))
}

// CollectionQuarantineSite suspends a site for seconds.
func (c *Client) CollectionQuarantineSite(ctx context.Context, collection, site string, seconds int) (string, error) {
	return c.cresult(ctx, "CollectionQuarantineSite", xmlrpc.String(collection), xmlrpc.String(site), xmlrpc.Int(seconds))
}

// CollectionRefetch refetches a collection or one subcollection.
func (c *Client) CollectionRefetch(ctx context.Context, collection, subcollection string) (string, error) {
	return c.cresult(ctx, "CollectionRefetch", xmlrpc.String(collection), xmlrpc.String(subcollection))
}

// CollectionRefetchURI refetches a URI (or its site).
func (c *Client) CollectionRefetchURI(ctx context.Context, collection, uri string, refeed, site, immediately bool) (string, error) {
	return c.cresult(ctx, "CollectionRefetchURI", xmlrpc.String(collection), xmlrpc.String(uri), flag(refeed), flag(site), flag(immediately))
}

// CollectionReprocessSite refeeds a site's documents.
func (c *Client) CollectionReprocessSite(ctx context.Context, collection, dest, site string) (string, error) {
	return c.cresult(ctx, "CollectionReprocessSite", xmlrpc.String(collection), xmlrpc.String(dest), xmlrpc.String(site))
}

// CollectionReprocessSitePrefix refeeds a site's documents under a prefix.
func (c *Client) CollectionReprocessSitePrefix(ctx context.Context, collection, site, prefix, dest string) (string, error) {
	return c.cresult(ctx, "CollectionReprocessSitePrefix", xmlrpc.String(collection), xmlrpc.String(site), xmlrpc.String(prefix), xmlrpc.String(dest))
}

// CollectionReprocessURI refeeds documents.
func (c *Client) CollectionReprocessURI(ctx context.Context, collection, dest string, uris []string) (string, error) {
	return c.cresult(ctx, "CollectionReprocessURI", xmlrpc.String(collection), xmlrpc.String(dest), strs(uris))
}

// CollectionResume resumes crawling.
func (c *Client) CollectionResume(ctx context.Context, collection string) (string, error) {
	return c.cresult(ctx, "CollectionResume", xmlrpc.String(collection))
}

// CollectionResumeFeeding resumes feeding.
func (c *Client) CollectionResumeFeeding(ctx context.Context, collection, dest string) (string, error) {
	return c.cresult(ctx, "CollectionResumeFeeding", xmlrpc.String(collection), xmlrpc.String(dest))
}

// CollectionSuspend suspends crawling.
func (c *Client) CollectionSuspend(ctx context.Context, collection string) (string, error) {
	return c.cresult(ctx, "CollectionSuspend", xmlrpc.String(collection))
}

// CollectionSuspendFeeding suspends feeding.
func (c *Client) CollectionSuspendFeeding(ctx context.Context, collection, dest string) (string, error) {
	return c.cresult(ctx, "CollectionSuspendFeeding", xmlrpc.String(collection), xmlrpc.String(dest))
}

// CollectionDisableRefreshOnly lets the collection crawl new content again.
func (c *Client) CollectionDisableRefreshOnly(ctx context.Context, collection string) (string, error) {
	return c.cresult(ctx, "CollectionDisableRefreshOnly", xmlrpc.String(collection))
}

// CollectionEnableRefreshOnly restricts the collection to known content.
func (c *Client) CollectionEnableRefreshOnly(ctx context.Context, collection string) (string, error) {
	return c.cresult(ctx, "CollectionEnableRefreshOnly", xmlrpc.String(collection))
}

// CollectionGetStatus returns "crawling", "suspended", "compacting" or
// "zombie".
func (c *Client) CollectionGetStatus(ctx context.Context, collection string) (string, error) {
	const m = "CollectionGetStatus"
	v, err := c.Call(ctx, m, xmlrpc.String(collection))
	if err != nil {
		return "", err
	}
	s, ok := v.(xmlrpc.String)
	if !ok {
		return "", badResult(m, v)
	}
	return string(s), nil
}

func (c *Client) statistics(ctx context.Context, m string, params ...xmlrpc.Value) (*stats.Statistics, error) {
	v, err := c.Call(ctx, m, params...)
	if err != nil {
		return nil, err
	}
	b, ok := v.(xmlrpc.Base64)
	if !ok {
		return nil, badResult(m, v)
	}
	st, err := stats.UnmarshalStatistics(b)
	if err != nil {
		return nil, fmt.Errorf("admin: %s: %w", m, err)
	}
	return st, nil
}

// CollectionGetSiteStatistics returns a site's statistics dictionary.
func (c *Client) CollectionGetSiteStatistics(ctx context.Context, collection, site string) (*stats.Statistics, error) {
	return c.statistics(ctx, "CollectionGetSiteStatistics", xmlrpc.String(collection), xmlrpc.String(site))
}

// CollectionGetStatistics returns the statistics dictionary of a
// collection ("" for all).
func (c *Client) CollectionGetStatistics(ctx context.Context, collection string) (*stats.Statistics, error) {
	return c.statistics(ctx, "CollectionGetStatistics", xmlrpc.String(collection))
}

// CollectionGetStatistics2 returns the flattened statistics of a
// collection.
func (c *Client) CollectionGetStatistics2(ctx context.Context, collection string) (*CollectionReport, error) {
	rep := &CollectionReport{}
	// "delta" of the 4.3 example is left out.
	dst := map[string]**stats.CollectionFlat{"cur": &rep.Cur, "prev": &rep.Prev, "complete": &rep.Complete}
	if err := flatReport(ctx, c, "CollectionGetStatistics2", dst, stats.ParseCollectionFlat, xmlrpc.String(collection)); err != nil {
		return nil, err
	}
	return rep, nil
}

// GetGlobalStatistics returns the flattened global statistics.
func (c *Client) GetGlobalStatistics(ctx context.Context) (*GlobalReport, error) {
	rep := &GlobalReport{}
	dst := map[string]**stats.GlobalFlat{"delta": &rep.Delta, "complete": &rep.Complete}
	if err := flatReport(ctx, c, "GetGlobalStatistics", dst, stats.ParseGlobalFlat); err != nil {
		return nil, err
	}
	return rep, nil
}

// flatReport calls m, whose result is a (status, struct) pair, and parses
// each member of the struct named in dst with parse into where dst points;
// other members are skipped.
func flatReport[F any](ctx context.Context, c *Client, m string, dst map[string]**F, parse func(marshal.Dict) (F, error), params ...xmlrpc.Value) error {
	v, err := c.Call(ctx, m, params...)
	if err != nil {
		return err
	}
	r, err := pair(m, v)
	if err != nil {
		return err
	}
	s, ok := r.(xmlrpc.Struct)
	if !ok {
		return badResult(m, v)
	}
	for _, mem := range s {
		p, ok := dst[mem.Name]
		if !ok {
			continue
		}
		d, ok := FromXMLRPC(mem.Value).(marshal.Dict)
		if !ok {
			return badResult(m, v)
		}
		f, err := parse(d)
		if err != nil {
			return fmt.Errorf("admin: %s: %s: %w", m, mem.Name, err)
		}
		*p = &f
	}
	return nil
}

// Ping calls ping.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.callInt(ctx, "ping")
	return err
}

// ConfigurationChanged calls the MS-FSCX callback ConfigurationChanged.
func (c *Client) ConfigurationChanged(ctx context.Context) error {
	_, err := c.callInt(ctx, "ConfigurationChanged")
	return err
}

// ReRegister calls the MS-FSCX callback ReRegister.
func (c *Client) ReRegister(ctx context.Context) error {
	_, err := c.callInt(ctx, "ReRegister")
	return err
}

// ListMethods calls system.listMethods.
func (c *Client) ListMethods(ctx context.Context) ([]string, error) {
	return c.stringList(ctx, "system.listMethods")
}

// MethodHelp calls system.methodHelp.
func (c *Client) MethodHelp(ctx context.Context, method string) (string, error) {
	v, err := c.Call(ctx, "system.methodHelp", xmlrpc.String(method))
	if err != nil {
		return "", err
	}
	s, ok := v.(xmlrpc.String)
	if !ok {
		return "", badResult("system.methodHelp", v)
	}
	return string(s), nil
}
