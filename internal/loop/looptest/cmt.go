package looptest

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/trawl/trawl/internal/cmt"
)

// CMT prints an MS-FSCMT message for a trace: its command name, then its
// fields that are not zero as Name=value, in declaration order. A checksum
// is printed by sum (its hex digits if sum is nil or returns ""); a string
// with spaces, quotes or '=' is quoted; field, if not nil, may print a
// field itself (a configuration as its collection names) by returning true.
func CMT(m cmt.Message, sum func(cmt.Checksum) string, field func(name string, v any) (string, bool)) string {
	var sb strings.Builder
	sb.WriteString(m.Code().String())
	v := reflect.ValueOf(m)
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return sb.String()
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return sb.String()
	}
	ty := v.Type()
	for i := range v.NumField() {
		f := v.Field(i)
		if !ty.Field(i).IsExported() || f.IsZero() {
			continue
		}
		name := ty.Field(i).Name
		fmt.Fprintf(&sb, " %s=%s", name, value(name, f.Interface(), sum, field))
	}
	return sb.String()
}

func value(name string, v any, sum func(cmt.Checksum) string, field func(string, any) (string, bool)) string {
	if field != nil {
		if s, ok := field(name, v); ok {
			return s
		}
	}
	switch x := v.(type) {
	case cmt.Checksum:
		if sum != nil {
			if s := sum(x); s != "" {
				return s
			}
		}
		return x.String()
	case string:
		if x == "" || strings.ContainsAny(x, " \t\n\"=") {
			return fmt.Sprintf("%q", x)
		}
		return x
	}
	return fmt.Sprintf("%v", v)
}
