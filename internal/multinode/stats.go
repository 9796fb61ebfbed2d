package multinode

import (
	"math"

	"github.com/trawl/trawl/internal/marshal"
)

// addValue adds delta to old: two integers as an integer (a sum beyond
// int64 becomes a float), an integer and a float or two floats as a float,
// two dictionaries key by key; any other value replaces old.
func addValue(old, delta marshal.Value) marshal.Value {
	switch o := old.(type) {
	case marshal.Int:
		switch x := delta.(type) {
		case marshal.Int:
			sum := o + x
			if (x > 0 && sum < o) || (x < 0 && sum > o) {
				return marshal.Float(float64(o) + float64(x))
			}
			return sum
		case marshal.Float:
			return marshal.Float(float64(o)) + x
		}
	case marshal.Float:
		switch x := delta.(type) {
		case marshal.Int:
			return o + marshal.Float(float64(x))
		case marshal.Float:
			if math.IsNaN(float64(x)) {
				return o
			}
			return o + x
		}
	case marshal.Dict:
		if x, ok := delta.(marshal.Dict); ok {
			d, _ := sumDict(copyDict(o), nil, x)
			return d
		}
	}
	return copyValue(delta)
}

func copyDict(d marshal.Dict) marshal.Dict {
	if d == nil {
		return nil
	}
	out := make(marshal.Dict, len(d))
	for i, p := range d {
		out[i] = marshal.Pair{Key: p.Key, Value: copyValue(p.Value)}
	}
	return out
}

func copyValue(v marshal.Value) marshal.Value {
	switch x := v.(type) {
	case marshal.Dict:
		return copyDict(x)
	case marshal.List:
		out := make(marshal.List, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	case marshal.Tuple:
		out := make(marshal.Tuple, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	case marshal.Bytes:
		return append(marshal.Bytes(nil), x...)
	}
	return v
}

func keyOf(v marshal.Value) string {
	return marshal.FormatPython(v)
}
