package cmt

import (
	"fmt"

	"github.com/trawl/trawl/internal/marshal"
)

// Messages the multinode scheduler sends to a node scheduler (2.2.3).
// CMD_UM_URI and CMD_UM_URI_URG are in messages_uri.go, the keep-alives
// (sent both ways) in messages_mns.go.

// appendDnCmd writes {dn, cm}.
func appendDnCmd(dst []byte, c Command, dn string) []byte {
	dst = marshal.AppendDictStart(dst)
	dst = appendStrField(dst, KeyDSpecName, dn)
	dst = appendCmd(dst, c)
	return marshal.AppendDictEnd(dst)
}

// appendDnPd writes {dn, pd, cm}.
func appendDnPd(dst []byte, c Command, dn string, pd marshal.Value) ([]byte, error) {
	dst = marshal.AppendDictStart(dst)
	dst = appendStrField(dst, KeyDSpecName, dn)
	dst, err := appendValueField(dst, KeyData, pd)
	if err != nil {
		return dst, err
	}
	dst = appendCmd(dst, c)
	return marshal.AppendDictEnd(dst), nil
}

// readData reads PKT_DATA as a marshal value.
func readData(r *marshal.Reader) (marshal.Value, error) {
	v, err := r.ReadValue()
	if err != nil {
		return nil, fmt.Errorf("cmt: PKT_DATA: %w", err)
	}
	return v, nil
}

// decodeDn handles PKT_DSPECNAME for the messages whose only other field
// is PKT_DATA: it reads dn, or PKT_DATA through pd.
func decodeDnPd(r *marshal.Reader, k keyID, dn *string, pd func(marshal.Value) error) (bool, error) {
	switch k {
	case kDSpecName:
		var err error
		*dn, err = readString(r, "PKT_DSPECNAME")
		return true, err
	case kData:
		if pd == nil {
			return false, nil
		}
		v, err := readData(r)
		if err != nil {
			return true, err
		}
		return true, pd(v)
	}
	return false, nil
}

// AdmConfUpdate is CMD_ADM_CONF_UPDATE (0, 2.2.3.12): a new configuration
// for an existing crawl collection.
type AdmConfUpdate struct {
	Collection string      // PKT_DSPECNAME
	Config     CrawlConfig // PKT_DSPEC
	// Epoch (PKT_EPOCH) is the configuration version; 0 leaves the key out.
	// The spec defines the key but lists it in no message; trawl
	// sends it with CONF_ADD and CONF_UPDATE.
	Epoch int64
}

// AdmConfAdd is CMD_ADM_CONF_ADD (1, 2.2.3.11): a crawl collection to set
// up (treated as an update if it exists).
type AdmConfAdd struct {
	Collection string      // PKT_DSPECNAME
	Config     CrawlConfig // PKT_DSPEC
	Epoch      int64       // PKT_EPOCH; 0 leaves the key out
}

func (*AdmConfUpdate) Code() Command { return CmdAdmConfUpdate }
func (*AdmConfAdd) Code() Command    { return CmdAdmConfAdd }

func (m *AdmConfUpdate) appendDict(dst []byte) ([]byte, error) {
	return appendConfMessage(dst, CmdAdmConfUpdate, m.Collection, &m.Config, m.Epoch)
}
func (m *AdmConfAdd) appendDict(dst []byte) ([]byte, error) {
	return appendConfMessage(dst, CmdAdmConfAdd, m.Collection, &m.Config, m.Epoch)
}
func (m *AdmConfUpdate) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeConfField(r, k, &m.Collection, &m.Config, &m.Epoch)
}
func (m *AdmConfAdd) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeConfField(r, k, &m.Collection, &m.Config, &m.Epoch)
}
func (*AdmConfUpdate) required() keySet { return keys(kDSpecName, kDSpec) }
func (*AdmConfAdd) required() keySet    { return keys(kDSpecName, kDSpec) }

// appendConfMessage writes {dn, ds, [ep], cm}.
func appendConfMessage(dst []byte, c Command, dn string, cfg *CrawlConfig, epoch int64) ([]byte, error) {
	v, err := cfg.Value()
	if err != nil {
		return dst, err
	}
	dst = marshal.AppendDictStart(dst)
	dst = appendStrField(dst, KeyDSpecName, dn)
	if dst, err = appendValueField(dst, KeyDSpec, v); err != nil {
		return dst, err
	}
	if epoch != 0 {
		dst = appendIntField(dst, KeyEpoch, epoch)
	}
	dst = appendCmd(dst, c)
	return marshal.AppendDictEnd(dst), nil
}

func decodeConfField(r *marshal.Reader, k keyID, dn *string, cfg *CrawlConfig, epoch *int64) (bool, error) {
	var err error
	switch k {
	case kDSpecName:
		*dn, err = readString(r, "PKT_DSPECNAME")
	case kDSpec:
		var v marshal.Value
		if v, err = r.ReadValue(); err != nil {
			return true, fmt.Errorf("cmt: PKT_DSPEC: %w", err)
		}
		*cfg, err = CrawlConfigFromValue(v)
	case kEpoch:
		*epoch, err = readInt(r, "PKT_EPOCH")
	default:
		return false, nil
	}
	return true, err
}

// AdmConfRemove is CMD_ADM_CONF_REMOVE (2, 2.2.3.13): remove a crawl
// collection.
type AdmConfRemove struct {
	Collection string // PKT_DSPECNAME
}

func (*AdmConfRemove) Code() Command { return CmdAdmConfRemove }
func (m *AdmConfRemove) appendDict(dst []byte) ([]byte, error) {
	return appendDnCmd(dst, CmdAdmConfRemove, m.Collection), nil
}
func (m *AdmConfRemove) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*AdmConfRemove) required() keySet { return keys(kDSpecName) }

// AdmConfSuspend is CMD_ADM_CONF_SUSPEND (3, 2.2.3.5): stop crawling a
// collection until CMD_ADM_CONF_RESUME, entering State (4, 5 or 8).
type AdmConfSuspend struct {
	Collection string          // PKT_DSPECNAME
	State      CollectionState // PKT_DATA
}

func (*AdmConfSuspend) Code() Command { return CmdAdmConfSuspend }
func (m *AdmConfSuspend) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdAdmConfSuspend, m.Collection, integer(int64(m.State)))
}
func (m *AdmConfSuspend) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		s, err := asInt32(v, "state")
		m.State = CollectionState(s)
		return err
	})
}
func (*AdmConfSuspend) required() keySet { return keys(kDSpecName, kData) }

// AdmConfResume is CMD_ADM_CONF_RESUME (4, 2.2.3.6): resume crawling a
// suspended collection.
type AdmConfResume struct {
	Collection string // PKT_DSPECNAME
}

func (*AdmConfResume) Code() Command { return CmdAdmConfResume }
func (m *AdmConfResume) appendDict(dst []byte) ([]byte, error) {
	return appendDnCmd(dst, CmdAdmConfResume, m.Collection), nil
}
func (m *AdmConfResume) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*AdmConfResume) required() keySet { return keys(kDSpecName) }

// AdmConfRefresh is CMD_ADM_CONF_REFRESH (5, 2.2.3.10): start a new crawl
// refresh cycle. PKT_DATA is (subcollection or None, bitmask).
type AdmConfRefresh struct {
	Collection    string       // PKT_DSPECNAME
	SubCollection string       // "" for the whole collection (None)
	Flags         RefreshFlags // RefreshLoadConfig, ...
}

func (*AdmConfRefresh) Code() Command { return CmdAdmConfRefresh }
func (m *AdmConfRefresh) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdAdmConfRefresh, m.Collection,
		marshal.Tuple{optStr(m.SubCollection), integer(int64(m.Flags))})
}
func (m *AdmConfRefresh) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 2, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.SubCollection, err = asOptString(t[0], "subcollection"); err != nil {
			return err
		}
		f, err := asUint32(t[1], "refresh flags")
		m.Flags = RefreshFlags(f)
		return err
	})
}
func (*AdmConfRefresh) required() keySet { return keys(kDSpecName, kData) }

// AdmPreemptSite is CMD_ADM_PREEMPT_SITE (6, 2.2.3.14): stop crawling a
// site for now; with Requeue, queue it at the front of the crawl queue.
type AdmPreemptSite struct {
	Collection string // PKT_DSPECNAME
	Site       string
	Requeue    bool
}

func (*AdmPreemptSite) Code() Command { return CmdAdmPreemptSite }
func (m *AdmPreemptSite) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdAdmPreemptSite, m.Collection, marshal.Tuple{str(m.Site), boolInt(m.Requeue)})
}
func (m *AdmPreemptSite) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 2, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.Site, err = asString(t[0], "site"); err != nil {
			return err
		}
		m.Requeue, err = asBool(t[1], "requeue")
		return err
	})
}
func (*AdmPreemptSite) required() keySet { return keys(kDSpecName, kData) }

// UMAddRoute is the node-scheduler-bound CMD_UM_ADD_ROUTE (7, 2.2.3.8): a
// routing decision. PKT_DATA is the 5-tuple (node id, routing attribute,
// site, addrinfo, seconds until the address must be resolved again).
type UMAddRoute struct {
	Collection string // PKT_DSPECNAME
	NodeID     string // the node scheduler the site is routed to
	RouteAttr  string // the part of the host name the routing uses
	Site       string
	// Addrs is the site's addresses, nil (None) when the collection
	// crawls through a proxy. It travels as a list of addrinfo tuples, as
	// in example 4.2; a single addrinfo is accepted too.
	Addrs []AddrInfo
	TTL   int64 // seconds
}

func (*UMAddRoute) Code() Command { return CmdUMAddRoute }
func (m *UMAddRoute) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMAddRoute, m.Collection, marshal.Tuple{str(m.NodeID), str(m.RouteAttr),
		str(m.Site), addrsValue(m.Addrs), integer(m.TTL)})
}
func (m *UMAddRoute) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 5, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.NodeID, err = asString(t[0], "node id"); err != nil {
			return err
		}
		if m.RouteAttr, err = asString(t[1], "routing attribute"); err != nil {
			return err
		}
		if m.Site, err = asString(t[2], "site"); err != nil {
			return err
		}
		if m.Addrs, err = addrsFromValue(t[3], "addrinfo"); err != nil {
			return err
		}
		m.TTL, err = asInt(t[4], "TTL")
		return err
	})
}
func (*UMAddRoute) required() keySet { return keys(kDSpecName, kData) }

// UMAskRoute is CMD_UM_ASK_ROUTE (8, 2.2.3.9): send every stored route
// (UMAddRouteReply messages), then CMD_UM_LAST_ROUTE.
type UMAskRoute struct {
	Collection string // PKT_DSPECNAME
}

func (*UMAskRoute) Code() Command { return CmdUMAskRoute }
func (m *UMAskRoute) appendDict(dst []byte) ([]byte, error) {
	return appendDnCmd(dst, CmdUMAskRoute, m.Collection), nil
}
func (m *UMAskRoute) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*UMAskRoute) required() keySet { return keys(kDSpecName) }

// UMDNSReply is CMD_UM_DNS_REPLY (13, 2.2.3.20): the answer to a
// CMD_UM_DNS_REQUEST. PKT_DSPECNAME must be empty. PKT_DATA is
// (host, (addrinfo or None, time resolved, TTL)).
type UMDNSReply struct {
	Collection string // PKT_DSPECNAME: "" per the spec
	Host       string
	Addrs      []AddrInfo // nil (None) when the lookup failed
	Time       int64      // when the resolution finished, Unix seconds
	TTL        int64      // seconds
}

func (*UMDNSReply) Code() Command { return CmdUMDNSReply }
func (m *UMDNSReply) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMDNSReply, m.Collection, marshal.Tuple{str(m.Host),
		marshal.Tuple{addrsValue(m.Addrs), integer(m.Time), integer(m.TTL)}})
}
func (m *UMDNSReply) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 2, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.Host, err = asString(t[0], "host"); err != nil {
			return err
		}
		res, err := asSeq(t[1], 3, "resolution")
		if err != nil {
			return err
		}
		if m.Addrs, err = addrsFromValue(res[0], "addrinfo"); err != nil {
			return err
		}
		if m.Time, err = asInt(res[1], "time"); err != nil {
			return err
		}
		m.TTL, err = asInt(res[2], "TTL")
		return err
	})
}
func (*UMDNSReply) required() keySet { return keys(kDSpecName, kData) }

// UMReprocessSite is CMD_UM_REPROCESS_SITE (14, 2.2.3.15): resubmit the
// matching crawled documents for indexing. PKT_DATA is (site, URI prefix,
// destination or None, exact).
type UMReprocessSite struct {
	Collection  string // PKT_DSPECNAME
	Site        string
	Prefix      string
	Destination string // "" for every destination of the collection (None)
	Exact       bool   // exact match rather than prefix match
}

func (*UMReprocessSite) Code() Command { return CmdUMReprocessSite }
func (m *UMReprocessSite) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMReprocessSite, m.Collection, marshal.Tuple{str(m.Site), str(m.Prefix),
		optStr(m.Destination), boolInt(m.Exact)})
}
func (m *UMReprocessSite) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 4, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.Site, err = asString(t[0], "site"); err != nil {
			return err
		}
		if m.Prefix, err = asString(t[1], "prefix"); err != nil {
			return err
		}
		if m.Destination, err = asOptString(t[2], "destination"); err != nil {
			return err
		}
		m.Exact, err = asBool(t[3], "exact")
		return err
	})
}
func (*UMReprocessSite) required() keySet { return keys(kDSpecName, kData) }

// UMQuarantineSite is CMD_UM_QUARANTINE_SITE (15, 2.2.3.18): stop crawling
// a site and block it for Seconds.
type UMQuarantineSite struct {
	Collection string // PKT_DSPECNAME
	Site       string
	Seconds    int64
}

// UMQuarantineSiteRequeue is CMD_UM_QUARANTINE_SITE_REQUEUE (21, 2.2.3.19):
// as UMQuarantineSite, then enqueue the site at the front of the queue.
type UMQuarantineSiteRequeue struct {
	Collection string // PKT_DSPECNAME
	Site       string
	Seconds    int64
}

func (*UMQuarantineSite) Code() Command        { return CmdUMQuarantineSite }
func (*UMQuarantineSiteRequeue) Code() Command { return CmdUMQuarantineSiteRequeue }
func (m *UMQuarantineSite) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMQuarantineSite, m.Collection, marshal.Tuple{str(m.Site), integer(m.Seconds)})
}
func (m *UMQuarantineSiteRequeue) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMQuarantineSiteRequeue, m.Collection, marshal.Tuple{str(m.Site), integer(m.Seconds)})
}
func (m *UMQuarantineSite) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, siteSeconds(&m.Site, &m.Seconds))
}
func (m *UMQuarantineSiteRequeue) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, siteSeconds(&m.Site, &m.Seconds))
}
func (*UMQuarantineSite) required() keySet        { return keys(kDSpecName, kData) }
func (*UMQuarantineSiteRequeue) required() keySet { return keys(kDSpecName, kData) }

func siteSeconds(site *string, secs *int64) func(marshal.Value) error {
	return func(v marshal.Value) error {
		t, err := asSeq(v, 2, "PKT_DATA")
		if err != nil {
			return err
		}
		if *site, err = asString(t[0], "site"); err != nil {
			return err
		}
		*secs, err = asInt(t[1], "seconds")
		return err
	}
}

// UMStartCrawlIPReply is the node-scheduler-bound CMD_UM_START_CRAWL_IP
// (16, 2.2.3.22): whether the node scheduler may crawl a site's IP address.
// PKT_DATA is (IP or host, site, crawl store id, allowed).
type UMStartCrawlIPReply struct {
	Collection string // PKT_DSPECNAME
	IP         string // the IP address, or the site's host name through a proxy
	Site       string
	StoreID    int64 // the storage cluster of the site
	Allowed    bool  // false: block the site for 30 minutes
}

func (*UMStartCrawlIPReply) Code() Command { return CmdUMStartCrawlIP }
func (m *UMStartCrawlIPReply) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMStartCrawlIP, m.Collection, marshal.Tuple{str(m.IP), str(m.Site),
		integer(m.StoreID), boolInt(m.Allowed)})
}
func (m *UMStartCrawlIPReply) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 4, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.IP, err = asString(t[0], "IP"); err != nil {
			return err
		}
		if m.Site, err = asString(t[1], "site"); err != nil {
			return err
		}
		if m.StoreID, err = asInt(t[2], "crawl store id"); err != nil {
			return err
		}
		m.Allowed, err = asBool(t[3], "allowed")
		return err
	})
}
func (*UMStartCrawlIPReply) required() keySet { return keys(kDSpecName, kData) }

// UMDeleteSite is CMD_UM_DELETE_SITE (18, 2.2.3.16): delete everything
// stored for a site and remove its documents from the index.
type UMDeleteSite struct {
	Collection string // PKT_DSPECNAME
	Site       string // PKT_DATA
}

func (*UMDeleteSite) Code() Command { return CmdUMDeleteSite }
func (m *UMDeleteSite) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMDeleteSite, m.Collection, str(m.Site))
}
func (m *UMDeleteSite) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		var err error
		m.Site, err = asString(v, "site")
		return err
	})
}
func (*UMDeleteSite) required() keySet { return keys(kDSpecName, kData) }

// SiteURIs is the list of URIs of one site in a UMDeleteURIs.
type SiteURIs struct {
	Site string
	URIs []string
}

// UMDeleteURIs is CMD_UM_DELETE_URIS (19, 2.2.3.17): delete URIs from the
// crawl store and the index. PKT_DATA is ({site: [uri, ...]},
// {"errcode": "USR"}).
type UMDeleteURIs struct {
	Collection string // PKT_DSPECNAME
	Sites      []SiteURIs
	// ErrCode is what the node scheduler writes to its fetch log; ""
	// sends ErrCodeUser ("USR"), the only value the spec gives.
	ErrCode string
}

func (*UMDeleteURIs) Code() Command { return CmdUMDeleteURIs }
func (m *UMDeleteURIs) appendDict(dst []byte) ([]byte, error) {
	sites := make(marshal.Dict, len(m.Sites))
	for i, s := range m.Sites {
		sites[i] = marshal.Pair{Key: str(s.Site), Value: stringList(s.URIs)}
	}
	code := m.ErrCode
	if code == "" {
		code = ErrCodeUser
	}
	return appendDnPd(dst, CmdUMDeleteURIs, m.Collection,
		marshal.Tuple{sites, marshal.Dict{{Key: str("errcode"), Value: str(code)}}})
}
func (m *UMDeleteURIs) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 2, "PKT_DATA")
		if err != nil {
			return err
		}
		sites, err := asDict(t[0], "sites")
		if err != nil {
			return err
		}
		m.Sites = nil
		for _, p := range sites {
			var s SiteURIs
			if s.Site, err = asString(p.Key, "site"); err != nil {
				return err
			}
			if s.URIs, err = asStringList(p.Value, "URIs"); err != nil {
				return err
			}
			if len(s.URIs) == 0 {
				s.URIs = nil
			}
			m.Sites = append(m.Sites, s)
		}
		ec, err := asDict(t[1], "errcode")
		if err != nil {
			return err
		}
		m.ErrCode = ""
		if c, ok := ec.Get("errcode"); ok {
			m.ErrCode, err = asString(c, "errcode")
		}
		return err
	})
}
func (*UMDeleteURIs) required() keySet { return keys(kDSpecName, kData) }

// UMConfState is the node-scheduler-bound CMD_UM_CONF_STATE (20,
// 2.2.3.21): the collection's new state; the multinode scheduler also sends
// it in answer to a UMConfStateRequest.
type UMConfState struct {
	Collection string          // PKT_DSPECNAME
	State      CollectionState // PKT_DATA
}

func (*UMConfState) Code() Command { return CmdUMConfState }
func (m *UMConfState) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMConfState, m.Collection, integer(int64(m.State)))
}
func (m *UMConfState) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		s, err := asInt32(v, "state")
		m.State = CollectionState(s)
		return err
	})
}
func (*UMConfState) required() keySet { return keys(kDSpecName, kData) }

// AdmConfFeedingSuspend is CMD_ADM_CONF_FEEDING_SUSPEND (23, 2.2.3.7):
// suspend or resume submitting content to some or all destinations.
// PKT_DATA is (1 suspend / 0 resume, None or [destination, ...]).
type AdmConfFeedingSuspend struct {
	Collection string // PKT_DSPECNAME
	Suspend    bool
	// Destinations are content submission destination names or
	// "default:<content collection>"; nil (None) means all of them.
	Destinations []string
}

func (*AdmConfFeedingSuspend) Code() Command { return CmdAdmConfFeedingSuspend }
func (m *AdmConfFeedingSuspend) appendDict(dst []byte) ([]byte, error) {
	var dests marshal.Value = marshal.None{}
	if m.Destinations != nil {
		dests = stringList(m.Destinations)
	}
	return appendDnPd(dst, CmdAdmConfFeedingSuspend, m.Collection, marshal.Tuple{boolInt(m.Suspend), dests})
}
func (m *AdmConfFeedingSuspend) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 2, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.Suspend, err = asBool(t[0], "state"); err != nil {
			return err
		}
		m.Destinations = nil
		if _, none := t[1].(marshal.None); none {
			return nil
		}
		m.Destinations, err = asStringList(t[1], "destinations")
		return err
	})
}
func (*AdmConfFeedingSuspend) required() keySet { return keys(kDSpecName, kData) }
