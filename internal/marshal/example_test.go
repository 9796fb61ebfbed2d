package marshal_test

import (
	"fmt"

	"github.com/trawl/trawl/internal/marshal"
)

// A message is built with the Append functions, without Values, and read
// back with a Reader straight into Go variables. Dictionary keys may come
// in any order; unknown keys are skipped.
func ExampleReader() {
	var msg []byte
	msg = marshal.AppendTupleHeader(msg, 2)
	msg = marshal.AppendDictStart(msg)
	msg = marshal.AppendString(msg, "cm")
	msg = marshal.AppendInt(msg, 25)
	msg = marshal.AppendString(msg, "xx")
	msg = marshal.AppendListHeader(msg, 1)
	msg = marshal.AppendFloat(msg, 1.5)
	msg = marshal.AppendString(msg, "dn")
	msg = marshal.AppendString(msg, "webcrawl")
	msg = marshal.AppendDictEnd(msg)
	msg = marshal.AppendInt(msg, 1)

	var (
		cmd, priority int64
		collection    string
	)
	r := marshal.NewReader(msg, marshal.DefaultLimits())
	read := func() error {
		if n, err := r.ReadTupleHeader(); err != nil || n != 2 {
			return fmt.Errorf("not a (dict, priority) tuple: %v", err)
		}
		if err := r.ReadDictStart(); err != nil {
			return err
		}
		for {
			more, err := r.DictNext()
			if err != nil {
				return err
			}
			if !more {
				break
			}
			key, err := r.ReadBytes()
			if err != nil {
				return err
			}
			switch string(key) {
			case "cm":
				cmd, err = r.ReadInt()
			case "dn":
				collection, err = r.ReadString()
			default:
				err = r.Skip()
			}
			if err != nil {
				return err
			}
		}
		var err error
		priority, err = r.ReadInt()
		return err
	}
	if err := read(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cmd, collection, priority, r.Remaining())
	// Output: 25 webcrawl 1 0
}

func ExampleDecode() {
	v, err := marshal.Decode([]byte("(\x02\x00\x00\x00i\x01\x00\x00\x00t\x01\x00\x00\x00x"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(marshal.FormatPython(v))
	_, err = marshal.Decode([]byte("(\x01\x00\x00\x00c"))
	fmt.Println(err)
	// Output:
	// (1, b'x')
	// marshal: code object (type code 0x63 'c') not allowed at byte 5
}

func ExampleEncode() {
	v, err := marshal.ParsePython("{'a': [1, 2**0 if False else 5L]}")
	fmt.Println(v, err)
	v, _ = marshal.ParsePython("({'a': [1, 5L, 1e999, u'\\xe9']}, 0)")
	b, _ := marshal.Encode(v)
	fmt.Printf("%x\n", b)
	fmt.Println(marshal.FormatPython(v))
	// Output:
	// <nil> marshal: bad Python literal: expected ',', found '*' at byte 11
	// 28020000007b7301000000615b040000006901000000690500000067000000000000f07f7502000000c3a9306900000000
	// ({b'a': [1, 5, 1e999, u'\xe9']}, 0)
}
