package cmt

import (
	"fmt"

	"github.com/trawl/trawl/internal/marshal"
)

// Messages a node scheduler sends to the multinode scheduler (2.2.4), and
// the keep-alives both send. CMD_UM_URI and CMD_UM_URI_URG are in
// messages_uri.go.

// UMInit is CMD_UM_INIT (24, 2.2.4.1), the first message a node scheduler
// sends on its connection to the multinode scheduler.
type UMInit struct {
	NodeID string // PKT_NODE_ID: the node scheduler's identifier
	// AdminHost and AdminPort are PKT_XMLRPCRT, the (host, port) tuple of
	// the node scheduler's administrative interface (MS-FSCADM). A bare
	// integer port (as 2.2.1.1 describes the key) is accepted too.
	AdminHost string
	AdminPort int32
}

func (*UMInit) Code() Command { return CmdUMInit }
func (m *UMInit) appendDict(dst []byte) ([]byte, error) {
	dst = marshal.AppendDictStart(dst)
	dst = appendKey(dst, KeyXMLRPCRT)
	dst = marshal.AppendTupleHeader(dst, 2)
	dst = marshal.AppendString(dst, m.AdminHost)
	dst = marshal.AppendInt(dst, int64(m.AdminPort))
	dst = appendStrField(dst, KeyNodeID, m.NodeID)
	dst = appendCmd(dst, CmdUMInit)
	return marshal.AppendDictEnd(dst), nil
}
func (m *UMInit) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	var err error
	switch k {
	case kNodeID:
		m.NodeID, err = readString(r, "PKT_NODE_ID")
	case kXMLRPCRT:
		var v marshal.Value
		if v, err = r.ReadValue(); err != nil {
			return true, fmt.Errorf("cmt: PKT_XMLRPCRT: %w", err)
		}
		if _, isInt := v.(marshal.Int); isInt {
			m.AdminHost = ""
			m.AdminPort, err = asInt32(v, "PKT_XMLRPCRT port")
			return true, err
		}
		t, err := asSeq(v, 2, "PKT_XMLRPCRT")
		if err != nil {
			return true, err
		}
		if m.AdminHost, err = asString(t[0], "PKT_XMLRPCRT host"); err != nil {
			return true, err
		}
		m.AdminPort, err = asInt32(t[1], "PKT_XMLRPCRT port")
		return true, err
	default:
		return false, nil
	}
	return true, err
}
func (*UMInit) required() keySet { return keys(kNodeID, kXMLRPCRT) }

// UMKeepalive is CMD_UM_KEEPALIVE (10, 2.2.3.1 and 2.2.4.2), sent both ways
// between the multinode scheduler and a node scheduler; the receiver
// answers UMKeepaliveAck.
type UMKeepalive struct{}

// UMKeepaliveAck is CMD_UM_KEEPALIVE_ACK (11, 2.2.3.2 and 2.2.4.3).
type UMKeepaliveAck struct{}

func (*UMKeepalive) Code() Command    { return CmdUMKeepalive }
func (*UMKeepaliveAck) Code() Command { return CmdUMKeepaliveAck }
func (*UMKeepalive) appendDict(dst []byte) ([]byte, error) {
	return appendCmdOnly(dst, CmdUMKeepalive), nil
}
func (*UMKeepaliveAck) appendDict(dst []byte) ([]byte, error) {
	return appendCmdOnly(dst, CmdUMKeepaliveAck), nil
}
func (*UMKeepalive) decodeField(*marshal.Reader, keyID) (bool, error)    { return false, nil }
func (*UMKeepaliveAck) decodeField(*marshal.Reader, keyID) (bool, error) { return false, nil }
func (*UMKeepalive) required() keySet                                    { return 0 }
func (*UMKeepaliveAck) required() keySet                                 { return 0 }

func appendCmdOnly(dst []byte, c Command) []byte {
	return marshal.AppendDictEnd(appendCmd(marshal.AppendDictStart(dst), c))
}

// UMDNSRequest is CMD_UM_DNS_REQUEST (12, 2.2.4.4): resolve a host name;
// the multinode scheduler answers UMDNSReply.
type UMDNSRequest struct {
	Collection string // PKT_DSPECNAME
	Site       string // PKT_SITE: the host name to resolve
}

func (*UMDNSRequest) Code() Command { return CmdUMDNSRequest }
func (m *UMDNSRequest) appendDict(dst []byte) ([]byte, error) {
	dst = marshal.AppendDictStart(dst)
	dst = appendStrField(dst, KeyDSpecName, m.Collection)
	dst = appendCmd(dst, CmdUMDNSRequest)
	dst = appendStrField(dst, KeySite, m.Site)
	return marshal.AppendDictEnd(dst), nil
}
func (m *UMDNSRequest) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	if k == kSite {
		var err error
		m.Site, err = readString(r, "PKT_SITE")
		return true, err
	}
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*UMDNSRequest) required() keySet { return keys(kDSpecName, kSite) }

// UMStat is CMD_UM_STAT (27, 2.2.4.6): the delta of a collection's crawl
// statistics since the previous report. Stats is the flattened statistics
// dictionary of MS-FSCADM 2.2.5, kept as marshal values (internal/stats
// gives it a model); nil is sent as an empty dictionary.
type UMStat struct {
	Collection string       // PKT_DSPECNAME
	Stats      marshal.Dict // PKT_DATA
}

func (*UMStat) Code() Command { return CmdUMStat }
func (m *UMStat) appendDict(dst []byte) ([]byte, error) {
	stats := m.Stats
	if stats == nil {
		stats = marshal.Dict{}
	}
	return appendDnPd(dst, CmdUMStat, m.Collection, stats)
}
func (m *UMStat) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		var err error
		m.Stats, err = asDict(v, "statistics")
		return err
	})
}
func (*UMStat) required() keySet { return keys(kDSpecName, kData) }

// UMLog is CMD_UM_LOG (28, 2.2.4.8): a line for one of the collection's
// logs. PKT_DATA is (log file, message).
type UMLog struct {
	Collection string // PKT_DSPECNAME
	File       LogFile
	Text       string
}

func (*UMLog) Code() Command { return CmdUMLog }
func (m *UMLog) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMLog, m.Collection, marshal.Tuple{str(string(m.File)), str(m.Text)})
}
func (m *UMLog) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 2, "PKT_DATA")
		if err != nil {
			return err
		}
		f, err := asString(t[0], "log file")
		if err != nil {
			return err
		}
		m.File = LogFile(f)
		m.Text, err = asString(t[1], "log message")
		return err
	})
}
func (*UMLog) required() keySet { return keys(kDSpecName, kData) }

// Route is one entry of a UMAddRouteReply: sites matching the routing
// attribute go to the node scheduler NodeID.
type Route struct {
	Attr   string
	NodeID string
}

// UMAddRouteReply is the multinode-scheduler-bound CMD_UM_ADD_ROUTE (7,
// 2.2.4.9), an answer to CMD_UM_ASK_ROUTE: at most MaxRoutesPerMessage
// routes, as a list of (routing attribute, node id) tuples.
type UMAddRouteReply struct {
	Collection string // PKT_DSPECNAME
	Routes     []Route
}

func (*UMAddRouteReply) Code() Command { return CmdUMAddRoute }
func (m *UMAddRouteReply) appendDict(dst []byte) ([]byte, error) {
	if len(m.Routes) > MaxRoutesPerMessage {
		return dst, fmt.Errorf("cmt: %d routes in one CMD_UM_ADD_ROUTE, at most %d", len(m.Routes), MaxRoutesPerMessage)
	}
	l := make(marshal.List, len(m.Routes))
	for i, rt := range m.Routes {
		l[i] = marshal.Tuple{str(rt.Attr), str(rt.NodeID)}
	}
	return appendDnPd(dst, CmdUMAddRoute, m.Collection, l)
}
func (m *UMAddRouteReply) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		l, err := asSeq(v, -1, "routes")
		if err != nil {
			return err
		}
		if len(l) > MaxRoutesPerMessage {
			return fieldError("routes", "%d routes, at most %d", len(l), MaxRoutesPerMessage)
		}
		m.Routes = nil
		for _, e := range l {
			t, err := asSeq(e, 2, "route")
			if err != nil {
				return err
			}
			var rt Route
			if rt.Attr, err = asString(t[0], "routing attribute"); err != nil {
				return err
			}
			if rt.NodeID, err = asString(t[1], "node id"); err != nil {
				return err
			}
			m.Routes = append(m.Routes, rt)
		}
		return nil
	})
}
func (*UMAddRouteReply) required() keySet { return keys(kDSpecName, kData) }

// UMLastRoute is CMD_UM_LAST_ROUTE (9, 2.2.4.10): every route has been
// sent in answer to CMD_UM_ASK_ROUTE.
type UMLastRoute struct {
	Collection string // PKT_DSPECNAME
}

func (*UMLastRoute) Code() Command { return CmdUMLastRoute }
func (m *UMLastRoute) appendDict(dst []byte) ([]byte, error) {
	return appendDnCmd(dst, CmdUMLastRoute, m.Collection), nil
}
func (m *UMLastRoute) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*UMLastRoute) required() keySet { return keys(kDSpecName) }

// UMStartCrawlIP is the multinode-scheduler-bound CMD_UM_START_CRAWL_IP
// (16, 2.2.4.11): may this node scheduler crawl the site's IP address?
// PKT_DATA is (IP or host, site, crawl store id); the answer is a
// UMStartCrawlIPReply.
type UMStartCrawlIP struct {
	Collection string // PKT_DSPECNAME
	IP         string // the IP address, or the site through a proxy
	Site       string
	StoreID    int64
}

func (*UMStartCrawlIP) Code() Command { return CmdUMStartCrawlIP }
func (m *UMStartCrawlIP) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMStartCrawlIP, m.Collection, marshal.Tuple{str(m.IP), str(m.Site), integer(m.StoreID)})
}
func (m *UMStartCrawlIP) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 3, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.IP, err = asString(t[0], "IP"); err != nil {
			return err
		}
		if m.Site, err = asString(t[1], "site"); err != nil {
			return err
		}
		m.StoreID, err = asInt(t[2], "crawl store id")
		return err
	})
}
func (*UMStartCrawlIP) required() keySet { return keys(kDSpecName, kData) }

// UMStopCrawlIP is CMD_UM_STOP_CRAWL_IP (17, 2.2.4.12): the node scheduler
// has stopped crawling the site. PKT_DATA is (IP or host, site).
type UMStopCrawlIP struct {
	Collection string // PKT_DSPECNAME
	IP         string
	Site       string
}

func (*UMStopCrawlIP) Code() Command { return CmdUMStopCrawlIP }
func (m *UMStopCrawlIP) appendDict(dst []byte) ([]byte, error) {
	return appendDnPd(dst, CmdUMStopCrawlIP, m.Collection, marshal.Tuple{str(m.IP), str(m.Site)})
}
func (m *UMStopCrawlIP) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		t, err := asSeq(v, 2, "PKT_DATA")
		if err != nil {
			return err
		}
		if m.IP, err = asString(t[0], "IP"); err != nil {
			return err
		}
		m.Site, err = asString(t[1], "site")
		return err
	})
}
func (*UMStopCrawlIP) required() keySet { return keys(kDSpecName, kData) }

// UMConfStateRequest is the multinode-scheduler-bound CMD_UM_CONF_STATE
// (20, 2.2.4.13), without PKT_DATA: the multinode scheduler answers with
// the collection's state in a UMConfState.
type UMConfStateRequest struct {
	Collection string // PKT_DSPECNAME
}

func (*UMConfStateRequest) Code() Command { return CmdUMConfState }
func (m *UMConfStateRequest) appendDict(dst []byte) ([]byte, error) {
	return appendDnCmd(dst, CmdUMConfState, m.Collection), nil
}
func (m *UMConfStateRequest) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*UMConfStateRequest) required() keySet { return keys(kDSpecName) }

// UMDeleteOK is CMD_UM_DELETE_OK (22, 2.2.4.14): the node scheduler has
// removed the collection (answer to CMD_ADM_CONF_REMOVE).
type UMDeleteOK struct {
	Collection string // PKT_DSPECNAME
}

func (*UMDeleteOK) Code() Command { return CmdUMDeleteOK }
func (m *UMDeleteOK) appendDict(dst []byte) ([]byte, error) {
	return appendDnCmd(dst, CmdUMDeleteOK, m.Collection), nil
}
func (m *UMDeleteOK) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*UMDeleteOK) required() keySet { return keys(kDSpecName) }
