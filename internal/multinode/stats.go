package multinode

import (
	"math"

	"github.com/trawl/trawl/internal/marshal"
)

// Stats are a collection's crawl statistics as the multinode scheduler
// keeps them: the sum of every CMD_UM_STAT delta the node schedulers sent.
// The statistics model of MS-FSCADM gives the keys their meaning; here a
// statistics structure is an opaque dictionary summed key by key:
//
//   - two integers add as an integer (a sum beyond int64 becomes a float);
//   - an integer and a float, or two floats, add as a float;
//   - two dictionaries are summed recursively, key by key;
//   - any other value (a string, a list, a bool) replaces the previous one;
//   - a key seen for the first time is taken as it is.
//
// Keys keep the order in which they first arrived.
type Stats struct {
	d     marshal.Dict
	index map[string]int
}

// Dict returns a deep copy of the summed statistics.
func (s *Stats) Dict() marshal.Dict {
	if s == nil {
		return nil
	}
	return copyDict(s.d)
}

// Add sums a delta into s.
func (s *Stats) Add(delta marshal.Dict) {
	s.d, s.index = addDict(s.d, s.index, delta)
}

func keyOf(v marshal.Value) string {
	return marshal.FormatPython(v)
}

func addDict(d marshal.Dict, index map[string]int, delta marshal.Dict) (marshal.Dict, map[string]int) {
	if index == nil {
		index = make(map[string]int, len(d)+len(delta))
		for i, p := range d {
			index[keyOf(p.Key)] = i
		}
	}
	for _, p := range delta {
		k := keyOf(p.Key)
		if i, ok := index[k]; ok {
			d[i].Value = addValue(d[i].Value, p.Value)
			continue
		}
		index[k] = len(d)
		d = append(d, marshal.Pair{Key: p.Key, Value: copyValue(p.Value)})
	}
	return d, index
}

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
			d, _ := addDict(copyDict(o), nil, x)
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
