package nameserver

import (
	"context"
	"fmt"

	"github.com/trawl/trawl/internal/distrib/wire"
)

// Registry is what distributors, indexers and searchers need of a name
// server: the embedded one (Client) or etcd.
type Registry interface {
	// Bind binds a (bind-if-absent, see the package comment); an error
	// that is a wire.ExcAlreadyBound exception says another address holds
	// the key.
	Bind(ctx context.Context, a wire.AOR) error
	// Resolve finds a binding; a wire.ExcResolve exception says none.
	Resolve(ctx context.Context, name, typ, version string) (wire.AOR, error)
	// Unbind removes a binding if there is one.
	Unbind(ctx context.Context, name, typ, version string) error
	// UnbindIf removes the binding of holder's name, type and version
	// only if it is holder (compare and delete).
	UnbindIf(ctx context.Context, holder wire.AOR) error
	// List returns the bindings whose names start with prefix.
	List(ctx context.Context, prefix string) ([]wire.AOR, error)
}

// Client is the Registry of a name server at Addr.
type Client struct {
	Addr string
	C    *wire.Client
}

// NewClient returns a client of the name server at addr.
func NewClient(addr string, c *wire.Client) *Client {
	if c == nil {
		c = &wire.Client{}
	}
	return &Client{Addr: addr, C: c}
}

// Bind implements Registry.
func (c *Client) Bind(ctx context.Context, a wire.AOR) error {
	_, err := c.C.Call(ctx, c.Addr, Object, "bind", a.Value())
	return err
}

// Resolve implements Registry.
func (c *Client) Resolve(ctx context.Context, name, typ, version string) (wire.AOR, error) {
	f, err := c.C.Call(ctx, c.Addr, Object, "resolve", wire.Str(name), wire.Str(typ), wire.Str(version))
	if err != nil {
		return wire.AOR{}, err
	}
	return wire.ParseAOR(f.Arg(0))
}

// Unbind implements Registry.
func (c *Client) Unbind(ctx context.Context, name, typ, version string) error {
	_, err := c.C.Call(ctx, c.Addr, Object, "unbind", wire.Str(name), wire.Str(typ), wire.Str(version))
	return err
}

// UnbindIf implements Registry: unbind with the holder as a fourth
// argument.
func (c *Client) UnbindIf(ctx context.Context, holder wire.AOR) error {
	_, err := c.C.Call(ctx, c.Addr, Object, "unbind", wire.Str(holder.Name), wire.Str(holder.Type), wire.Str(holder.Version), holder.Value())
	return err
}

// List implements Registry.
func (c *Client) List(ctx context.Context, prefix string) ([]wire.AOR, error) {
	f, err := c.C.Call(ctx, c.Addr, Object, "list", wire.Str(prefix))
	if err != nil {
		return nil, err
	}
	l := f.Arg(0)
	if l.Tag != wire.List {
		return nil, fmt.Errorf("nameserver: list answered %s", f)
	}
	out := make([]wire.AOR, 0, len(l.L))
	for _, v := range l.L {
		a, err := wire.ParseAOR(v)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}
