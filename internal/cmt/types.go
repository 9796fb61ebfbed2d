package cmt

import (
	"fmt"
	"strings"
)

// Command is the packet command type carried under the PKT_CMD ("cm") key
// (MS-FSCMT 2.2.3, 2.2.4, 2.2.5).
type Command int32

// Command codes. Codes 0-28 travel between the multinode scheduler and the
// node schedulers; 50-61 (PPDUP_*) between node schedulers, duplicate
// servers and replicas. The PPDUP codes are those of the normative table of
// section 2.2.5; the section 4 examples use other numbers (DESIGN.md 4.2).
const (
	CmdAdmConfUpdate           Command = 0
	CmdAdmConfAdd              Command = 1
	CmdAdmConfRemove           Command = 2
	CmdAdmConfSuspend          Command = 3
	CmdAdmConfResume           Command = 4
	CmdAdmConfRefresh          Command = 5
	CmdAdmPreemptSite          Command = 6
	CmdUMAddRoute              Command = 7
	CmdUMAskRoute              Command = 8
	CmdUMLastRoute             Command = 9
	CmdUMKeepalive             Command = 10
	CmdUMKeepaliveAck          Command = 11
	CmdUMDNSRequest            Command = 12
	CmdUMDNSReply              Command = 13
	CmdUMReprocessSite         Command = 14
	CmdUMQuarantineSite        Command = 15
	CmdUMStartCrawlIP          Command = 16
	CmdUMStopCrawlIP           Command = 17
	CmdUMDeleteSite            Command = 18
	CmdUMDeleteURIs            Command = 19
	CmdUMConfState             Command = 20
	CmdUMQuarantineSiteRequeue Command = 21
	CmdUMDeleteOK              Command = 22
	CmdAdmConfFeedingSuspend   Command = 23
	CmdUMInit                  Command = 24
	CmdUMURI                   Command = 25
	CmdUMURIUrg                Command = 26
	CmdUMStat                  Command = 27
	CmdUMLog                   Command = 28

	CmdPPDUPAddOK        Command = 50
	CmdPPDUPError        Command = 51
	CmdPPDUPAdd          Command = 52
	CmdPPDUPRemove       Command = 53
	CmdPPDUPRemoveOK     Command = 54
	CmdPPDUPKeepalive    Command = 55
	CmdPPDUPKeepaliveAck Command = 56
	CmdPPDUPPromoteReq   Command = 57
	CmdPPDUPConfRemove   Command = 58
	CmdPPDUPSetConfig    Command = 59
	CmdPPDUPConfigAck    Command = 60
	CmdPPDUPConfRemove2  Command = 61
)

var commandNames = map[Command]string{
	CmdAdmConfUpdate:           "CMD_ADM_CONF_UPDATE",
	CmdAdmConfAdd:              "CMD_ADM_CONF_ADD",
	CmdAdmConfRemove:           "CMD_ADM_CONF_REMOVE",
	CmdAdmConfSuspend:          "CMD_ADM_CONF_SUSPEND",
	CmdAdmConfResume:           "CMD_ADM_CONF_RESUME",
	CmdAdmConfRefresh:          "CMD_ADM_CONF_REFRESH",
	CmdAdmPreemptSite:          "CMD_ADM_PREEMPT_SITE",
	CmdUMAddRoute:              "CMD_UM_ADD_ROUTE",
	CmdUMAskRoute:              "CMD_UM_ASK_ROUTE",
	CmdUMLastRoute:             "CMD_UM_LAST_ROUTE",
	CmdUMKeepalive:             "CMD_UM_KEEPALIVE",
	CmdUMKeepaliveAck:          "CMD_UM_KEEPALIVE_ACK",
	CmdUMDNSRequest:            "CMD_UM_DNS_REQUEST",
	CmdUMDNSReply:              "CMD_UM_DNS_REPLY",
	CmdUMReprocessSite:         "CMD_UM_REPROCESS_SITE",
	CmdUMQuarantineSite:        "CMD_UM_QUARANTINE_SITE",
	CmdUMStartCrawlIP:          "CMD_UM_START_CRAWL_IP",
	CmdUMStopCrawlIP:           "CMD_UM_STOP_CRAWL_IP",
	CmdUMDeleteSite:            "CMD_UM_DELETE_SITE",
	CmdUMDeleteURIs:            "CMD_UM_DELETE_URIS",
	CmdUMConfState:             "CMD_UM_CONF_STATE",
	CmdUMQuarantineSiteRequeue: "CMD_UM_QUARANTINE_SITE_REQUEUE",
	CmdUMDeleteOK:              "CMD_UM_DELETE_OK",
	CmdAdmConfFeedingSuspend:   "CMD_ADM_CONF_FEEDING_SUSPEND",
	CmdUMInit:                  "CMD_UM_INIT",
	CmdUMURI:                   "CMD_UM_URI",
	CmdUMURIUrg:                "CMD_UM_URI_URG",
	CmdUMStat:                  "CMD_UM_STAT",
	CmdUMLog:                   "CMD_UM_LOG",
	CmdPPDUPAddOK:              "PPDUP_ADD_OK",
	CmdPPDUPError:              "PPDUP_ERROR",
	CmdPPDUPAdd:                "PPDUP_ADD",
	CmdPPDUPRemove:             "PPDUP_REMOVE",
	CmdPPDUPRemoveOK:           "PPDUP_REMOVE_OK",
	CmdPPDUPKeepalive:          "PPDUP_KEEPALIVE",
	CmdPPDUPKeepaliveAck:       "PPDUP_KEEPALIVE_ACK",
	CmdPPDUPPromoteReq:         "PPDUP_PROMOTE_REQ",
	CmdPPDUPConfRemove:         "PPDUP_CONF_REMOVE",
	CmdPPDUPSetConfig:          "PPDUP_SET_CONFIG",
	CmdPPDUPConfigAck:          "PPDUP_CONFIG_ACK",
	CmdPPDUPConfRemove2:        "PPDUP_CONF_REMOVE2",
}

// String returns the spec's name of the command ("CMD_UM_URI"), or
// "Command(n)" for a code the spec does not define.
func (c Command) String() string {
	if s, ok := commandNames[c]; ok {
		return s
	}
	return fmt.Sprintf("Command(%d)", int32(c))
}

// Known reports whether the spec defines the command code.
func (c Command) Known() bool {
	_, ok := commandNames[c]
	return ok
}

// Message dictionary keys (MS-FSCMT 2.2.1.1), as sent on the wire.
const (
	KeyCmd          = "cm" // PKT_CMD
	KeyURI          = "ur" // PKT_URI
	KeyVClock       = "vc" // PKT_VCLOCK
	KeySiteAddrInfo = "si" // PKT_SITE_ADDRINFO (used by no message)
	KeyDSpecName    = "dn" // PKT_DSPECNAME
	KeySite         = "st" // PKT_SITE
	KeyDSpec        = "ds" // PKT_DSPEC
	KeyEpoch        = "ep" // PKT_EPOCH
	KeyCsum         = "cs" // PKT_CSUM
	KeyID           = "id" // PKT_ID
	KeyOwnURI       = "ou" // PKT_OWNURI
	KeyWhy          = "wy" // PKT_WHY
	KeyNodeID       = "mi" // PKT_NODE_ID
	KeyData         = "pd" // PKT_DATA
	KeyPPDUPID      = "pi" // PKT_PPDUP_ID
	KeyDBName       = "db" // PKT_DBNAME
	KeyXMLRPCRT     = "xp" // PKT_XMLRPCRT
)

// Priority is the second element of the message tuple (MS-FSCMT 2.2.1).
type Priority int32

// The two priorities a message may have.
const (
	// PriorityNormal messages are appended to the communication queues.
	PriorityNormal Priority = 0
	// PriorityHigh messages are delivered before normal ones. trawl keeps
	// them first-in first-out among themselves (docs/decisions/cmt.md).
	PriorityHigh Priority = 1
)

func (p Priority) String() string {
	switch p {
	case PriorityNormal:
		return "normal"
	case PriorityHigh:
		return "high"
	}
	return fmt.Sprintf("Priority(%d)", int32(p))
}

// DefaultPriority is the priority trawl sends a command with: the one the
// spec's examples and rules use where they show one (INIT, DNS request and
// reply, SET_CONFIG and CONFIG_ACK high; URI, ADD_ROUTE, PPDUP_ADD and ADD_OK
// normal; PPDUP_CONF_REMOVE "to the front" and CONF_REMOVE2 "to the end",
// 3.1.5.12), high for the remaining control messages that should not wait
// behind a long URI backlog (keep-alives, URI_URG, suspends, quarantines,
// state changes), and normal otherwise.
func DefaultPriority(c Command) Priority {
	switch c {
	case CmdUMInit, CmdUMDNSRequest, CmdUMDNSReply, CmdPPDUPSetConfig, CmdPPDUPConfigAck,
		CmdPPDUPConfRemove, CmdUMKeepalive, CmdUMKeepaliveAck, CmdPPDUPKeepalive,
		CmdPPDUPKeepaliveAck, CmdUMURIUrg, CmdAdmConfSuspend, CmdAdmConfResume,
		CmdAdmPreemptSite, CmdUMQuarantineSite, CmdUMQuarantineSiteRequeue,
		CmdUMConfState, CmdUMStartCrawlIP, CmdAdmConfFeedingSuspend:
		return PriorityHigh
	}
	return PriorityNormal
}

// URIFlags is the URI flag bitmask of a crawl queue entry (2.2.2.2.1).
type URIFlags uint32

// URI flag values (2.2.2.2.1). 0x800 and 0x80000000 are not defined and
// 0x20000 is reserved.
const (
	URIFNoFlags        URIFlags = 0x00000000
	URIFStartURI       URIFlags = 0x00000001
	URIFForce          URIFlags = 0x00000002
	URIFForceBSite     URIFlags = 0x00000004
	URIFForceRefeed    URIFlags = 0x00000008
	URIFJavaScript     URIFlags = 0x00000010
	URIFRedirect301    URIFlags = 0x00000020
	URIFRedirect302    URIFlags = 0x00000040
	URIFDelIfExcl      URIFlags = 0x00000080
	URIFPromote        URIFlags = 0x00000100
	URIFMetaRefresh    URIFlags = 0x00000200
	URIFStartURIFeed   URIFlags = 0x00000400
	URIFRescheduled    URIFlags = 0x00001000
	URIFUnscreened     URIFlags = 0x00002000
	URIFMetaNoIndex    URIFlags = 0x00004000
	URIFMetaNoFollow   URIFlags = 0x00008000
	URIFSiteURI        URIFlags = 0x00010000
	URIFReserved20000  URIFlags = 0x00020000
	URIFNoCrawl        URIFlags = 0x00040000
	URIFRedirect300    URIFlags = 0x00080000
	URIFMultipleChoice URIFlags = 0x00100000
	URIFFeedHighPri    URIFlags = 0x00200000
	URIFRSS            URIFlags = 0x00400000
	URIFCleanSite      URIFlags = 0x00800000
	URIFNoFollow       URIFlags = 0x01000000
	URIFLoadLevel      URIFlags = 0x02000000
	URIFIgnoreRules    URIFlags = 0x04000000
	URIFRSSChild       URIFlags = 0x08000000
	URIFSitemap        URIFlags = 0x10000000
	URIFIgnoreNetloc   URIFlags = 0x20000000
	URIFUpdateCargo    URIFlags = 0x40000000
)

var uriFlagNames = [...]string{
	"URIF_STARTURI", "URIF_FORCE", "URIF_FORCEBSITE", "URIF_FORCE_REFEED", "URIF_JAVASCRIPT",
	"URIF_REDIRECT_301", "URIF_REDIRECT_302", "URIF_DEL_IF_EXCL", "URIF_PROMOTE",
	"URIF_META_REFRESH", "URIF_STARTURI_FEED", "", "URIF_RESCHEDULED", "URIF_UNSCREENED",
	"URIF_META_NOINDEX", "URIF_META_NOFOLLOW", "URIF_SITEURI", "URIF_RESERVED_0x20000",
	"URIF_NO_CRAWL", "URIF_REDIRECT_300", "URIF_MULTIPLECHOICE", "URIF_FEED_HIGHPRI",
	"URIF_RSS", "URIF_CLEANSITE", "URIF_NOFOLLOW", "URIF_LOADLEVEL", "URIF_IGNORE_RULES",
	"URIF_RSS_CHILD", "URIF_SITEMAP", "URIF_IGNORE_NETLOC", "URIF_UPDATE_CARGO",
}

// String lists the flags by their spec names joined by "|", with any
// undefined bits in hex; 0 is "URIF_NOFLAGS".
func (f URIFlags) String() string {
	if f == 0 {
		return "URIF_NOFLAGS"
	}
	var parts []string
	rest := f
	for i, name := range uriFlagNames {
		bit := URIFlags(1) << i
		if name != "" && f&bit != 0 {
			parts = append(parts, name)
			rest &^= bit
		}
	}
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint32(rest)))
	}
	return strings.Join(parts, "|")
}

// FrameFlags is the frame flag of a crawl queue entry (2.2.2.2.2): 0 or one
// of the two values below.
type FrameFlags int32

// Frame flag values (2.2.2.2.2).
const (
	FrameNone   FrameFlags = 0
	FrameParent FrameFlags = 1 // URI_STATE_FRAME_PARENT: the document holds a frameset
	FrameChild  FrameFlags = 2 // URI_STATE_FRAME_CHILD: a frame extracted from a frameset
)

func (f FrameFlags) String() string {
	switch f {
	case FrameNone:
		return "0"
	case FrameParent:
		return "URI_STATE_FRAME_PARENT"
	case FrameChild:
		return "URI_STATE_FRAME_CHILD"
	}
	return fmt.Sprintf("FrameFlags(%d)", int32(f))
}

// QueueFlags is the queue flag bitmask of a crawl queue entry (2.2.2.2.3).
type QueueFlags uint32

// Queue flag values (2.2.2.2.3); 0x08 and 0x10 are reserved.
const (
	QFPrepend QueueFlags = 0x01 // enqueue at the front of the crawl queue
	QFForce   QueueFlags = 0x02 // bypass the wqfilter, smfilter and mufilter filters
	QFUrgent  QueueFlags = 0x04 // crawl as soon as possible
)

func (f QueueFlags) String() string {
	if f == 0 {
		return "0"
	}
	var parts []string
	for _, b := range []struct {
		bit  QueueFlags
		name string
	}{{QFPrepend, "QF_PREPEND"}, {QFForce, "QF_FORCE"}, {QFUrgent, "QF_URGENT"}} {
		if f&b.bit != 0 {
			parts = append(parts, b.name)
		}
	}
	if rest := f &^ (QFPrepend | QFForce | QFUrgent); rest != 0 {
		parts = append(parts, fmt.Sprintf("0x%x", uint32(rest)))
	}
	return strings.Join(parts, "|")
}

// CollectionState is a crawl collection state (2.2.3.21), the PKT_DATA of
// CMD_UM_CONF_STATE and CMD_ADM_CONF_SUSPEND.
type CollectionState int32

// Crawl collection states (2.2.3.21).
const (
	StateActive          CollectionState = 1 // active, can queue new URIs
	StateBlocked         CollectionState = 2 // temporarily blocked from queuing new URIs
	StateRemoving        CollectionState = 3 // being removed
	StateSuspendedUser   CollectionState = 4 // suspended by the user
	StateSuspendedDisk   CollectionState = 5 // suspended: the disk is almost full
	StateCompactionStart CollectionState = 6 // nightly compaction initiated
	StateCompacting      CollectionState = 7 // currently compacting
	StateSuspendedDelay  CollectionState = 8 // suspended by the variable delay option
)

var stateNames = [...]string{"", "active", "blocked", "removing", "suspended-user",
	"suspended-disk", "compaction-initiated", "compacting", "suspended-variable-delay"}

func (s CollectionState) String() string {
	if s >= 1 && int(s) < len(stateNames) {
		return fmt.Sprintf("%d (%s)", int32(s), stateNames[s])
	}
	return fmt.Sprintf("CollectionState(%d)", int32(s))
}

// Valid reports whether s is one of the states 1-8.
func (s CollectionState) Valid() bool { return s >= 1 && s <= 8 }

// RefreshFlags is the CMD_ADM_CONF_REFRESH bitmask (2.2.3.10).
type RefreshFlags uint32

// CMD_ADM_CONF_REFRESH bits (2.2.3.10). The spec writes the last one as
// "0x16"; trawl reads it as 0x10 (docs/decisions/cmt.md).
const (
	RefreshLoadConfig     RefreshFlags = 0x01 // load the collection configuration from disk
	RefreshCollection     RefreshFlags = 0x02 // refresh the entire crawl collection
	RefreshSubCollection  RefreshFlags = 0x04 // refresh the subcollection
	RefreshStartURIsOnly  RefreshFlags = 0x08 // requeue only the start URIs
	RefreshTruncateQueues RefreshFlags = 0x10 // truncate the work queues and restart the crawl
)

// LogFile names the log of a CMD_UM_LOG message (2.2.4.8).
type LogFile string

// Log files (2.2.4.8).
const (
	LogSite     LogFile = "si" // CF_SITELOGFILE: crawl site log
	LogScreened LogFile = "ur" // CF_SCREENEDLOGFILE: screened log
	LogSchedule LogFile = "sc" // CF_SCHEDULELOGFILE: schedule log
	LogFetch    LogFile = "dk" // CF_LOGFILE: fetch log
)

// Other protocol constants.
const (
	// MaxRoutesPerMessage is the largest route array of an MNS-bound
	// CMD_UM_ADD_ROUTE (2.2.4.9).
	MaxRoutesPerMessage = 256
	// EntryTag is the structure identifier of a crawl queue entry.
	EntryTag = "WQE"
	// ErrCodeUser is the errcode of CMD_UM_DELETE_URIS (2.2.3.17).
	ErrCodeUser = "USR"
	// NoPort stands for the None port of an unparsed URI structure.
	NoPort = -1
)

// AddrInfo is one host-name lookup result (2.2.2.1): the 5-tuple
// (family, socktype, proto, canonname, (ip, port)). The port must be 0.
type AddrInfo struct {
	Family    int32 // 2 = AF_INET in the examples
	SockType  int32 // 1 = SOCK_STREAM in the examples
	Protocol  int32
	CanonName string
	IP        string
	Port      int32
}

// RedirectHop is one entry of a crawl queue entry's redirect trail: the URI
// that redirected and how (URIFRedirect300/301/302 or URIFMetaRefresh).
type RedirectHop struct {
	URI  string
	Type URIFlags
}

// URIStructure is the 14-field URI structure (2.2.2.2.4). When Parsed is
// false, fields Scheme..Credentials are empty and Port is NoPort.
type URIStructure struct {
	URI           string // 0
	Scheme        string // 1
	Netloc        string // 2
	Host          string // 3
	Port          int32  // 4: NoPort (-1) stands for None
	Path          string // 5
	Query         string // 6
	Params        string // 7
	Fragment      string // 8
	Credentials   string // 9
	DefaultScheme string // 10
	SkipFragments bool   // 11: 1 = skip, 0 = do not skip
	Parsed        bool   // 12: 1 = parsed per RFC 2396
	HostIDNA      string // 13: IDNA-encoded host name
}

// EmptyURIStructure is the URI structure of the empty URI "", the referrer
// of an entry that was not extracted from a document. It is the form of
// example 4.4: parsed, skip fragments, port None.
func EmptyURIStructure() URIStructure {
	return URIStructure{Port: NoPort, SkipFragments: true, Parsed: true}
}

// Entry is a crawl queue entry, the 9-tuple tagged "WQE" (2.2.2.2).
type Entry struct {
	URI        URIStructure  // 1
	Referrer   URIStructure  // 2: EmptyURIStructure() when there is none
	Flags      URIFlags      // 3
	FrameFlags FrameFlags    // 4
	Redirects  []RedirectHop // 5: the redirect trail, oldest first
	QueueFlags QueueFlags    // 6
	Cycle      int64         // 7: crawl refresh cycle where last crawled (-1 in the example)
	// Extra (8) is additional information about the URI (RSS or sitemap
	// metadata). Keys may be integers (example 4.4: {16: None, 101: id}).
	// A nil Extra is sent as an empty dictionary.
	Extra []ExtraItem
}

// ExtraItem is one entry of Entry.Extra. Keys and values are kept as the
// scalar kinds the example shows: an integer or a string key, and a None,
// integer, float or string value.
type ExtraItem struct {
	Key   Scalar
	Value Scalar
}

// ScalarKind is the type of a Scalar.
type ScalarKind uint8

// The kinds of Scalar.
const (
	ScalarNone ScalarKind = iota
	ScalarInt
	ScalarString
	ScalarFloat
)

// Scalar is a small tagged value: None, an integer, a string or a float.
type Scalar struct {
	Kind  ScalarKind
	Int   int64
	Str   string
	Float float64
}

// IntScalar, StrScalar, FloatScalar and NoneScalar build Scalars.
func IntScalar(i int64) Scalar     { return Scalar{Kind: ScalarInt, Int: i} }
func StrScalar(s string) Scalar    { return Scalar{Kind: ScalarString, Str: s} }
func FloatScalar(f float64) Scalar { return Scalar{Kind: ScalarFloat, Float: f} }
func NoneScalar() Scalar           { return Scalar{} }
func (s Scalar) String() string {
	switch s.Kind {
	case ScalarInt:
		return fmt.Sprint(s.Int)
	case ScalarString:
		return fmt.Sprintf("%q", s.Str)
	case ScalarFloat:
		return fmt.Sprint(s.Float)
	}
	return "None"
}

// Checksum is a document fingerprint, PKT_CSUM: the 16 raw bytes of an MD5
// digest (DESIGN.md 4.2). The zero Checksum stands for "absent" in the
// messages where the key is optional.
type Checksum [16]byte

func (c Checksum) String() string { return fmt.Sprintf("%x", c[:]) }

// IsZero reports whether c is all zero bytes (absent).
func (c Checksum) IsZero() bool { return c == Checksum{} }
