package cmt

import (
	"fmt"

	"github.com/trawl/trawl/internal/marshal"
)

// Duplicate server messages (2.2.5), between node schedulers, duplicate
// servers and replicas. The checksum messages (ADD, ADD_OK, REMOVE,
// REMOVE_OK) are on the hot path and are written with marshal's append
// helpers directly.

// PPDUPAdd is PPDUP_ADD (52, 2.2.5.3): register a document checksum for a
// URI; the duplicate server answers PPDUPAddOK. A duplicate server
// forwarding it to its replica adds PPDUPID and DBName.
type PPDUPAdd struct {
	Collection string   // PKT_DSPECNAME
	NodeID     string   // PKT_ID: the originating node scheduler
	URI        string   // PKT_URI
	Checksum   Checksum // PKT_CSUM
	PPDUPID    string   // PKT_PPDUP_ID, when forwarded to a replica ("" leaves it out)
	DBName     string   // PKT_DBNAME, when forwarded to a replica ("" leaves it out)
}

// PPDUPRemove is PPDUP_REMOVE (53, 2.2.5.4): unregister the owner URI of a
// checksum; the duplicate server answers PPDUPRemoveOK and sends
// PPDUPPromoteReq to the node schedulers of the collection.
type PPDUPRemove struct {
	Collection string   // PKT_DSPECNAME
	NodeID     string   // PKT_ID
	URI        string   // PKT_URI: the owner URI to remove
	Checksum   Checksum // PKT_CSUM
	PPDUPID    string   // PKT_PPDUP_ID, when forwarded
	DBName     string   // PKT_DBNAME, when forwarded
}

func (*PPDUPAdd) Code() Command    { return CmdPPDUPAdd }
func (*PPDUPRemove) Code() Command { return CmdPPDUPRemove }

func (m *PPDUPAdd) appendDict(dst []byte) ([]byte, error) {
	return appendChecksumMessage(dst, CmdPPDUPAdd, true, true, m.Checksum, m.Collection, "", m.PPDUPID, m.DBName, m.NodeID, m.URI), nil
}
func (m *PPDUPRemove) appendDict(dst []byte) ([]byte, error) {
	return appendChecksumMessage(dst, CmdPPDUPRemove, true, true, m.Checksum, m.Collection, "", m.PPDUPID, m.DBName, m.NodeID, m.URI), nil
}
func (m *PPDUPAdd) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeChecksumField(r, k, &m.Checksum, &m.Collection, nil, &m.PPDUPID, &m.DBName, &m.NodeID, &m.URI)
}
func (m *PPDUPRemove) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeChecksumField(r, k, &m.Checksum, &m.Collection, nil, &m.PPDUPID, &m.DBName, &m.NodeID, &m.URI)
}
func (*PPDUPAdd) required() keySet    { return keys(kDSpecName, kID, kURI, kCsum) }
func (*PPDUPRemove) required() keySet { return keys(kDSpecName, kID, kURI, kCsum) }

// PPDUPAddOK is PPDUP_ADD_OK (50, 2.2.5.1): the checksum is registered, and
// OwnerURI owns it (a URI other than the node scheduler's own means a
// duplicate). A replica answers its duplicate server with the same keys as
// the PPDUP_ADD (PPDUPID, DBName and the checksum included).
type PPDUPAddOK struct {
	Collection string   // PKT_DSPECNAME
	NodeID     string   // PKT_ID: the originating node scheduler
	URI        string   // PKT_URI: the URI added
	OwnerURI   string   // PKT_OWNURI ("" leaves it out, as example 4.6 does)
	PPDUPID    string   // PKT_PPDUP_ID, from a replica
	DBName     string   // PKT_DBNAME, from a replica
	Checksum   Checksum // PKT_CSUM, from a replica (zero leaves it out)
}

func (*PPDUPAddOK) Code() Command { return CmdPPDUPAddOK }
func (m *PPDUPAddOK) appendDict(dst []byte) ([]byte, error) {
	return appendChecksumMessage(dst, CmdPPDUPAddOK, false, true, m.Checksum, m.Collection, m.OwnerURI, m.PPDUPID, m.DBName, m.NodeID, m.URI), nil
}
func (m *PPDUPAddOK) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeChecksumField(r, k, &m.Checksum, &m.Collection, &m.OwnerURI, &m.PPDUPID, &m.DBName, &m.NodeID, &m.URI)
}
func (*PPDUPAddOK) required() keySet { return keys(kDSpecName, kID, kURI) }

// PPDUPRemoveOK is PPDUP_REMOVE_OK (54, 2.2.5.5): the URI's checksum is
// unregistered. From a replica it carries the keys of the PPDUP_REMOVE.
type PPDUPRemoveOK struct {
	Collection string   // PKT_DSPECNAME
	URI        string   // PKT_URI
	PPDUPID    string   // PKT_PPDUP_ID, from a replica
	DBName     string   // PKT_DBNAME, from a replica
	NodeID     string   // PKT_ID, from a replica ("" leaves it out)
	Checksum   Checksum // PKT_CSUM, from a replica (zero leaves it out)
}

func (*PPDUPRemoveOK) Code() Command { return CmdPPDUPRemoveOK }
func (m *PPDUPRemoveOK) appendDict(dst []byte) ([]byte, error) {
	return appendChecksumMessage(dst, CmdPPDUPRemoveOK, false, false, m.Checksum, m.Collection, "", m.PPDUPID, m.DBName, m.NodeID, m.URI), nil
}
func (m *PPDUPRemoveOK) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeChecksumField(r, k, &m.Checksum, &m.Collection, nil, &m.PPDUPID, &m.DBName, &m.NodeID, &m.URI)
}
func (*PPDUPRemoveOK) required() keySet { return keys(kDSpecName, kURI) }

// appendChecksumMessage writes the keys of the checksum messages in
// trawl's order: cs dn ou pi db id cm ur. dn and ur are always written, cs
// and id when the message requires them (needCS, needID) even if zero or
// empty, so the receiver sees what was sent; otherwise a zero checksum and
// empty optional strings are left out.
func appendChecksumMessage(dst []byte, c Command, needCS, needID bool, cs Checksum, dn, ou, pi, db, id, ur string) []byte {
	dst = marshal.AppendDictStart(dst)
	if needCS || !cs.IsZero() {
		dst = appendChecksumField(dst, cs)
	}
	dst = appendStrField(dst, KeyDSpecName, dn)
	dst = appendOptStrField(dst, KeyOwnURI, ou)
	dst = appendOptStrField(dst, KeyPPDUPID, pi)
	dst = appendOptStrField(dst, KeyDBName, db)
	if needID {
		dst = appendStrField(dst, KeyID, id)
	} else {
		dst = appendOptStrField(dst, KeyID, id)
	}
	dst = appendCmd(dst, c)
	dst = appendStrField(dst, KeyURI, ur)
	return marshal.AppendDictEnd(dst)
}

// decodeChecksumField reads one key of a checksum message; a nil pointer
// marks a key the message does not use.
func decodeChecksumField(r *marshal.Reader, k keyID, cs *Checksum, dn, ou, pi, db, id, ur *string) (bool, error) {
	var dst *string
	var what string
	switch k {
	case kCsum:
		var err error
		*cs, err = readChecksum(r, "PKT_CSUM")
		return true, err
	case kDSpecName:
		dst, what = dn, "PKT_DSPECNAME"
	case kOwnURI:
		dst, what = ou, "PKT_OWNURI"
	case kPPDUPID:
		dst, what = pi, "PKT_PPDUP_ID"
	case kDBName:
		dst, what = db, "PKT_DBNAME"
	case kID:
		dst, what = id, "PKT_ID"
	case kURI:
		dst, what = ur, "PKT_URI"
	}
	if dst == nil {
		return false, nil
	}
	var err error
	*dst, err = readString(r, what)
	return true, err
}

// PPDUPError is PPDUP_ERROR (51, 2.2.5.2): a command failed; the node
// scheduler logs Why.
type PPDUPError struct {
	Collection string // PKT_DSPECNAME
	Why        string // PKT_WHY
}

func (*PPDUPError) Code() Command { return CmdPPDUPError }
func (m *PPDUPError) appendDict(dst []byte) ([]byte, error) {
	dst = marshal.AppendDictStart(dst)
	dst = appendStrField(dst, KeyDSpecName, m.Collection)
	dst = appendStrField(dst, KeyWhy, m.Why)
	dst = appendCmd(dst, CmdPPDUPError)
	return marshal.AppendDictEnd(dst), nil
}
func (m *PPDUPError) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	if k == kWhy {
		var err error
		m.Why, err = readString(r, "PKT_WHY")
		return true, err
	}
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*PPDUPError) required() keySet { return keys(kDSpecName, kWhy) }

// PPDUPKeepalive is PPDUP_KEEPALIVE (55, 2.2.5.6), between a node scheduler
// and a duplicate server or a duplicate server and its replica; the
// receiver answers PPDUPKeepaliveAck.
//
// Epoch is a trawl extension, the fencing epoch of a duplicate server pair
// (internal/dupserver, "Fencing"): sent as PKT_EPOCH ("ep", the integer key
// of 2.2.1.1) only when not zero, so the message of a peer that does not
// use it is the spec's own, and a PKT_EPOCH the receiver does not know is
// skipped like any unknown pair.
type PPDUPKeepalive struct {
	Epoch int64 // PKT_EPOCH (trawl extension), 0 if absent
}

// PPDUPKeepaliveAck is PPDUP_KEEPALIVE_ACK (56, 2.2.5.7).
type PPDUPKeepaliveAck struct{}

func (*PPDUPKeepalive) Code() Command    { return CmdPPDUPKeepalive }
func (*PPDUPKeepaliveAck) Code() Command { return CmdPPDUPKeepaliveAck }
func (m *PPDUPKeepalive) appendDict(dst []byte) ([]byte, error) {
	if m.Epoch == 0 {
		return appendCmdOnly(dst, CmdPPDUPKeepalive), nil
	}
	dst = marshal.AppendDictStart(dst)
	dst = appendIntField(dst, KeyEpoch, m.Epoch)
	dst = appendCmd(dst, CmdPPDUPKeepalive)
	return marshal.AppendDictEnd(dst), nil
}
func (*PPDUPKeepaliveAck) appendDict(dst []byte) ([]byte, error) {
	return appendCmdOnly(dst, CmdPPDUPKeepaliveAck), nil
}
func (m *PPDUPKeepalive) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	if k != kEpoch {
		return false, nil
	}
	var err error
	m.Epoch, err = readInt(r, "PKT_EPOCH")
	if err == nil && m.Epoch < 0 {
		err = malformed("PKT_EPOCH %d is negative", m.Epoch)
	}
	return true, err
}
func (*PPDUPKeepaliveAck) decodeField(*marshal.Reader, keyID) (bool, error) { return false, nil }
func (*PPDUPKeepalive) required() keySet                                    { return 0 }
func (*PPDUPKeepaliveAck) required() keySet                                 { return 0 }

// PPDUPPromoteReq is PPDUP_PROMOTE_REQ (57, 2.2.5.8): the owner of the
// checksum was removed; recrawl the URIs with the same checksum (flagged
// URIFPromote) so that one of them becomes the owner.
type PPDUPPromoteReq struct {
	Collection string   // PKT_DSPECNAME
	Checksum   Checksum // PKT_CSUM
}

func (*PPDUPPromoteReq) Code() Command { return CmdPPDUPPromoteReq }
func (m *PPDUPPromoteReq) appendDict(dst []byte) ([]byte, error) {
	dst = marshal.AppendDictStart(dst)
	dst = appendChecksumField(dst, m.Checksum)
	dst = appendStrField(dst, KeyDSpecName, m.Collection)
	dst = appendCmd(dst, CmdPPDUPPromoteReq)
	return marshal.AppendDictEnd(dst), nil
}
func (m *PPDUPPromoteReq) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	if k == kCsum {
		var err error
		m.Checksum, err = readChecksum(r, "PKT_CSUM")
		return true, err
	}
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*PPDUPPromoteReq) required() keySet { return keys(kDSpecName, kCsum) }

// PPDUPConfRemove is PPDUP_CONF_REMOVE (58, 2.2.5.9): the collection is
// being removed; discard its checksum store and every later message for
// it. A duplicate server forwarding it to its replica adds PPDUPID.
type PPDUPConfRemove struct {
	Collection string // PKT_DSPECNAME
	PPDUPID    string // PKT_PPDUP_ID, when forwarded ("" leaves it out)
}

func (*PPDUPConfRemove) Code() Command { return CmdPPDUPConfRemove }
func (m *PPDUPConfRemove) appendDict(dst []byte) ([]byte, error) {
	dst = marshal.AppendDictStart(dst)
	dst = appendStrField(dst, KeyDSpecName, m.Collection)
	dst = appendOptStrField(dst, KeyPPDUPID, m.PPDUPID)
	dst = appendCmd(dst, CmdPPDUPConfRemove)
	return marshal.AppendDictEnd(dst), nil
}
func (m *PPDUPConfRemove) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	if k == kPPDUPID {
		var err error
		m.PPDUPID, err = readString(r, "PKT_PPDUP_ID")
		return true, err
	}
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*PPDUPConfRemove) required() keySet { return keys(kDSpecName) }

// PPDUPConfRemove2 is PPDUP_CONF_REMOVE2 (61, 2.2.5.12): the last message
// for a removed collection; drop its configuration.
type PPDUPConfRemove2 struct {
	Collection string // PKT_DSPECNAME
}

func (*PPDUPConfRemove2) Code() Command { return CmdPPDUPConfRemove2 }
func (m *PPDUPConfRemove2) appendDict(dst []byte) ([]byte, error) {
	return appendDnCmd(dst, CmdPPDUPConfRemove2, m.Collection), nil
}
func (m *PPDUPConfRemove2) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	return decodeDnPd(r, k, &m.Collection, nil)
}
func (*PPDUPConfRemove2) required() keySet { return keys(kDSpecName) }

// PPDUPSetConfig is PPDUP_SET_CONFIG (59, 2.2.5.10): a collection's
// duplicate-server configuration (from a node scheduler, only the ppdup
// section of each collection, example 4.5). The receiver answers
// PPDUPConfigAck echoing VClock.
type PPDUPSetConfig struct {
	Collection string      // PKT_DSPECNAME; "" leaves it out (a node scheduler always sends it)
	Config     CrawlConfig // PKT_DATA
	VClock     int64       // PKT_VCLOCK: the sender's vector clock (see VectorClock)
}

func (*PPDUPSetConfig) Code() Command { return CmdPPDUPSetConfig }
func (m *PPDUPSetConfig) appendDict(dst []byte) ([]byte, error) {
	v, err := m.Config.Value()
	if err != nil {
		return dst, err
	}
	dst = marshal.AppendDictStart(dst)
	dst = appendOptStrField(dst, KeyDSpecName, m.Collection)
	dst = appendIntField(dst, KeyVClock, m.VClock)
	if dst, err = appendValueField(dst, KeyData, v); err != nil {
		return dst, err
	}
	dst = appendCmd(dst, CmdPPDUPSetConfig)
	return marshal.AppendDictEnd(dst), nil
}
func (m *PPDUPSetConfig) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	if k == kVClock {
		var err error
		m.VClock, err = readInt(r, "PKT_VCLOCK")
		return true, err
	}
	return decodeDnPd(r, k, &m.Collection, func(v marshal.Value) error {
		var err error
		m.Config, err = CrawlConfigFromValue(v)
		if err != nil {
			return fmt.Errorf("cmt: PKT_DATA: %w", err)
		}
		return nil
	})
}
func (*PPDUPSetConfig) required() keySet { return keys(kData, kVClock) }

// PPDUPConfigAck is PPDUP_CONFIG_ACK (60, 2.2.5.11): the answer to
// PPDUP_SET_CONFIG, echoing its vector clock.
type PPDUPConfigAck struct {
	VClock int64 // PKT_VCLOCK
}

func (*PPDUPConfigAck) Code() Command { return CmdPPDUPConfigAck }
func (m *PPDUPConfigAck) appendDict(dst []byte) ([]byte, error) {
	dst = marshal.AppendDictStart(dst)
	dst = appendIntField(dst, KeyVClock, m.VClock)
	dst = appendCmd(dst, CmdPPDUPConfigAck)
	return marshal.AppendDictEnd(dst), nil
}
func (m *PPDUPConfigAck) decodeField(r *marshal.Reader, k keyID) (bool, error) {
	if k == kVClock {
		var err error
		m.VClock, err = readInt(r, "PKT_VCLOCK")
		return true, err
	}
	return false, nil
}
func (*PPDUPConfigAck) required() keySet { return keys(kVClock) }
