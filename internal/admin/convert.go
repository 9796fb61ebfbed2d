package admin

import (
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/xmlrpc"
)

// marshalStats writes a statistics dictionary as <base64> of its marshal
// bytes (DESIGN.md 4.4).
func marshalStats(st *stats.Statistics, err error) (xmlrpc.Value, error) {
	if err != nil {
		return nil, err
	}
	if st == nil {
		st = &stats.Statistics{}
	}
	b, err := st.Marshal()
	if err != nil {
		return nil, fmt.Errorf("marshalling statistics: %w", err)
	}
	return xmlrpc.Base64(b), nil
}

func flatStruct(f *stats.CollectionFlat) xmlrpc.Value {
	if f == nil {
		return xmlrpc.Struct{}
	}
	v, _ := ToXMLRPC(f.Dict())
	return v
}

func globalStruct(f *stats.GlobalFlat) xmlrpc.Value {
	if f == nil {
		return xmlrpc.Struct{}
	}
	v, _ := ToXMLRPC(f.Dict())
	return v
}

// ToXMLRPC converts a marshal value to XML-RPC: int to <int> (or <i8>),
// float to <double>, str and unicode to <string>, a dict with string keys to
// a <struct>, list and tuple to <array>, None to <nil/>, bool to <boolean>.
// A long beyond int64 becomes a <double>. Other kinds (sets, complex,
// non-string keys) are an error.
func ToXMLRPC(v marshal.Value) (xmlrpc.Value, error) {
	switch x := v.(type) {
	case marshal.Int:
		return xmlrpc.Int(x), nil
	case marshal.Long:
		f, _ := new(big.Float).SetInt(x.Int).Float64()
		return xmlrpc.Double(f), nil
	case marshal.Float:
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, fmt.Errorf("admin: %v cannot travel in XML-RPC", float64(x))
		}
		return xmlrpc.Double(x), nil
	case marshal.Bool:
		return xmlrpc.Bool(x), nil
	case marshal.Bytes:
		return xmlrpc.String(x), nil
	case marshal.Unicode:
		return xmlrpc.String(x), nil
	case marshal.None:
		return xmlrpc.Nil{}, nil
	case marshal.List:
		return toArray(x)
	case marshal.Tuple:
		return toArray(x)
	case marshal.Dict:
		out := make(xmlrpc.Struct, 0, len(x))
		for _, p := range x {
			var k string
			switch kk := p.Key.(type) {
			case marshal.Bytes:
				k = string(kk)
			case marshal.Unicode:
				k = string(kk)
			default:
				return nil, fmt.Errorf("admin: dictionary key %s is not a string", marshal.FormatPython(p.Key))
			}
			e, err := ToXMLRPC(p.Value)
			if err != nil {
				return nil, err
			}
			out = append(out, xmlrpc.Member{Name: k, Value: e})
		}
		return out, nil
	}
	return nil, fmt.Errorf("admin: a %s cannot travel in XML-RPC", v.Kind())
}

func toArray(l []marshal.Value) (xmlrpc.Value, error) {
	out := make(xmlrpc.Array, len(l))
	for i, e := range l {
		v, err := ToXMLRPC(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// FromXMLRPC converts an XML-RPC value to marshal's model: strings become
// str, structs dicts, arrays lists, <base64> str, a date its unix time as a
// float, <nil/> None.
func FromXMLRPC(v xmlrpc.Value) marshal.Value {
	switch x := v.(type) {
	case xmlrpc.Int:
		return marshal.Int(x)
	case xmlrpc.Bool:
		return marshal.Bool(x)
	case xmlrpc.String:
		return marshal.Str(string(x))
	case xmlrpc.Double:
		return marshal.Float(x)
	case xmlrpc.DateTime:
		return marshal.Float(float64(time.Time(x).UnixNano()) / 1e9)
	case xmlrpc.Base64:
		return marshal.Bytes(x)
	case xmlrpc.Array:
		out := make(marshal.List, len(x))
		for i, e := range x {
			out[i] = FromXMLRPC(e)
		}
		return out
	case xmlrpc.Struct:
		out := make(marshal.Dict, len(x))
		for i, m := range x {
			out[i] = marshal.Pair{Key: marshal.Str(m.Name), Value: FromXMLRPC(m.Value)}
		}
		return out
	}
	return marshal.None{}
}
