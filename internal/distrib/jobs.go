package distrib

import (
	"fmt"

	"github.com/trawl/trawl/internal/distrib/wire"
)

// The jobs a distributor asks its worker to do: every call it makes to the
// name server, to the master and to the indexing dispatcher. A job's
// Result is a wire.AOR for Resolve and nothing for the others; its error
// is the exception or the transport failure.
type (
	// Resolve asks the registry for a binding.
	Resolve struct{ Name, Type, Version string }
	// Bind binds an AOR in the registry.
	Bind struct{ AOR wire.AOR }
	// Unbind removes a binding from the registry; with a Holder (Port not
	// 0), only if the binding is still that AOR.
	Unbind struct {
		Name, Type, Version string
		Holder              wire.AOR
	}
	// Ping calls __ping on the object of type Type at Addr.
	Ping struct{ Addr, Type string }
	// Register calls master_dispatcher::register_dispatcher(NodeID) at Addr.
	Register struct {
		Addr   string
		NodeID int64
	}
	// IndexSession calls coreprocessing::session_factory::Method (create,
	// recreate or close) for session ID of Collection on every indexer.
	IndexSession struct {
		Method     string
		ID         int64
		Collection string
	}
)

func (j Resolve) String() string { return fmt.Sprintf("resolve %s %s %s", j.Name, j.Type, j.Version) }
func (j Bind) String() string    { return "bind " + j.AOR.String() }
func (j Unbind) String() string {
	if j.Holder.Port != 0 {
		return fmt.Sprintf("unbind %s %s %s held by %s %s", j.Name, j.Type, j.Version, j.Holder.Addr(), j.Holder.ObjectID)
	}
	return fmt.Sprintf("unbind %s %s %s", j.Name, j.Type, j.Version)
}
func (j Ping) String() string { return "ping " + j.Addr + " " + j.Type }
func (j Register) String() string {
	return fmt.Sprintf("register_dispatcher(%d) at %s", j.NodeID, j.Addr)
}
func (j IndexSession) String() string {
	return fmt.Sprintf("coreprocessing::session_factory::%s(%d, %q)", j.Method, j.ID, j.Collection)
}

func resolveSF() Resolve {
	return Resolve{wire.NameDispatcher, wire.IfaceSessionFactory, wire.VersionSessionFactory}
}

func resolveMD() Resolve {
	return Resolve{wire.NameDispatcher, wire.IfaceMasterDispatcher, wire.VersionMasterDispatcher}
}

// NodeName is the name of node id's dispatcher_node. MS-FSCDFT binds it as
// "esp/subsystems/processing/dispatcher/<id>" (3.5.3) and resolves it as
// "esp/subsystem/..." (3.1.4.1): both use the plural here.
func NodeName(id int64) string { return fmt.Sprintf("%s%d", wire.NameNodePrefix, id) }
