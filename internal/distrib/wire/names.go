package wire

import (
	"errors"
	"fmt"
	"strconv"
)

// The names, interface types and versions of MS-FSCDFT section 3 (digest
// section 4). The spec binds dispatcher_node as "esp/subsystems/..." (3.5.3,
// 4.2.4) and resolves it as "esp/subsystem/..." (3.1.4.1): the plural is
// used for both, the singular being a typo (see internal/distrib's doc).
const (
	NameDispatcher  = "esp/subsystems/processing/dispatcher"
	NameNodePrefix  = "esp/subsystems/processing/dispatcher/"
	NameIndexPrefix = "esp/subsystems/indexing/dispatcher/"

	IfaceSessionFactory   = "processing::session_factory"
	IfaceMasterDispatcher = "processing::master_dispatcher"
	IfaceDispatcherNode   = "processing::dispatcher_node"
	IfaceSession          = "processing::session"
	IfaceIndexFactory     = "coreprocessing::session_factory"
	IfaceNameServer       = "nameserver"

	VersionSessionFactory   = "5.1"
	VersionMasterDispatcher = "5.0"
	VersionDispatcherNode   = "5.1"
	VersionSession          = "5.1"
	VersionIndexFactory     = "5.1"
	VersionNameServer       = "1.0"

	// Port offsets from a distributor's base port: dispatcher_node,
	// session_factory, master_dispatcher and internal sessions on +390,
	// sessions of external clients on +391.
	PortInternal = 390
	PortExternal = 391
	// PortNameServer is the name server's offset.
	PortNameServer = 4

	MethodPing = "__ping"
)

// The exceptions.
const (
	ExcUnknownCollection     = "processing::unknown_collection"
	ExcUnsupportedGuarantees = "core::unsupported_guarantee_set"
	ExcUnknownSession        = "processing::unknown_session"
	ExcResolve               = "nameserver::resolve_exception"
	ExcAlreadyBound          = "nameserver::already_bound"
	ExcBadRequest            = "middleware::bad_request"
	ExcUnavailable           = "middleware::unavailable"
)

// The Cheetah entities of MS-FSCDFT section 2.2.
const (
	TypeGuarantee       = 3
	TypeFeedingPriority = 7
	TypeGuaranteeSet    = 9
	Checksum            = -1479218033
)

// GuaranteeSet returns a cht::core::guarantee_set entity; with priority
// >= 0 it holds one feeding_priority of that priority, else none.
func GuaranteeSet(priority int64) Value {
	var gs []Value
	if priority >= 0 {
		gs = append(gs, Ent(TypeFeedingPriority, Checksum, I64(priority)))
	}
	return Ent(TypeGuaranteeSet, Checksum, Lst(gs...))
}

// CheckGuarantees validates a guarantee_set argument and a priority
// argument (MS-FSCDFT 3.5.4.1): the set holds one feeding_priority of
// priority 0 or nothing, and priority is 0. The error's text is the what
// of core::unsupported_guarantee_set.
func CheckGuarantees(set Value, priority Value) error {
	if priority.Tag != Int || priority.I != 0 {
		return fmt.Errorf("priority must be 0, got %s", priority)
	}
	if set.Tag != Entity || set.Type != TypeGuaranteeSet || set.I != Checksum {
		return fmt.Errorf("guarantees is not a cht::core::guarantee_set (type 9, checksum %d): %s", Checksum, set)
	}
	if len(set.L) != 1 || set.L[0].Tag != List {
		return errors.New("guarantee_set must have one attribute, the guarantees collection")
	}
	gs := set.L[0].L
	switch len(gs) {
	case 0:
		return nil
	case 1:
		g := gs[0]
		if g.Tag != Entity || g.Type != TypeFeedingPriority || g.I != Checksum || len(g.L) != 1 || g.L[0].Tag != Int {
			return fmt.Errorf("the guarantee is not a cht::core::feeding_priority: %s", g)
		}
		if g.L[0].I != 0 {
			return fmt.Errorf("feeding_priority must be 0, got %d", g.L[0].I)
		}
		return nil
	}
	return fmt.Errorf("guarantee_set holds %d guarantees, at most one feeding_priority is supported", len(gs))
}

// AOR is an abstract object reference ([MS-FSMW] 2.2.18).
type AOR struct {
	Name, ObjectID, Host string
	Port                 int
	Type, Version        string
}

// Addr is host:port.
func (a AOR) Addr() string { return a.Host + ":" + strconv.Itoa(a.Port) }

// Key is the name server's key of a binding: name, type and version.
func (a AOR) Key() string { return a.Name + "\x00" + a.Type + "\x00" + a.Version }

func (a AOR) String() string {
	return fmt.Sprintf("aor[%s %s %s %s %s]", a.Addr(), a.Type, a.Version, a.ObjectID, a.Name)
}

// Value encodes the AOR as a list: name, object_id, host, port, type, version.
func (a AOR) Value() Value {
	return Lst(Str(a.Name), Str(a.ObjectID), Str(a.Host), I64(int64(a.Port)), Str(a.Type), Str(a.Version))
}

// ParseAOR decodes an AOR value.
func ParseAOR(v Value) (AOR, error) {
	if v.Tag != List || len(v.L) != 6 {
		return AOR{}, errors.New("wire: an AOR is a list of six values")
	}
	for i, t := range []Tag{String, String, String, Int, String, String} {
		if v.L[i].Tag != t {
			return AOR{}, fmt.Errorf("wire: AOR field %d is not %q", i, byte(t))
		}
	}
	a := AOR{Name: v.L[0].S, ObjectID: v.L[1].S, Host: v.L[2].S, Port: int(v.L[3].I), Type: v.L[4].S, Version: v.L[5].S}
	if v.L[3].I <= 0 || v.L[3].I > 65535 {
		return AOR{}, fmt.Errorf("wire: AOR port %d", v.L[3].I)
	}
	if a.Name == "" || a.Type == "" {
		return AOR{}, errors.New("wire: AOR without name or type")
	}
	return a, nil
}

// Call returns a request frame.
func Call(id uint64, object, method string, args ...Value) *Frame {
	return &Frame{Kind: Request, ID: id, Object: object, Method: method, Args: args}
}

// ReplyTo returns the reply to request f.
func ReplyTo(f *Frame, results ...Value) *Frame {
	return &Frame{Kind: Reply, ID: f.ID, Object: f.Object, Method: f.Method, Args: results}
}

// Raise returns exception name with text what in answer to f.
func Raise(f *Frame, name, what string) *Frame {
	return &Frame{Kind: Exception, ID: f.ID, Object: f.Object, Method: name, Args: []Value{Str(what)}}
}

// Error is an exception received in answer to a call.
type Error struct {
	Name, What string
}

func (e *Error) Error() string { return e.Name + ": " + e.What }

// Err returns the exception a frame carries, or nil for a reply.
func (f *Frame) Err() error {
	if f.Kind != Exception {
		return nil
	}
	return &Error{Name: f.Method, What: f.Arg(0).S}
}

// IsException reports whether err is exception name.
func IsException(err error, name string) bool {
	var e *Error
	return errors.As(err, &e) && e.Name == name
}
