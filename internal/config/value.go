package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// parseScalar parses the trimmed text of a non-list parameter according to
// its definition: type, range, enumeration (the syntax check runs later,
// with a check context).
func parseScalar(d *ParamDef, text string) (Value, error) {
	v := Value{Type: d.Type}
	switch d.Type {
	case Integer:
		if text == "" {
			return v, errors.New("empty value, want an integer")
		}
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
				return v, fmt.Errorf("integer %s out of range (INT32)", text)
			}
			return v, fmt.Errorf("invalid integer %q", Clip(text))
		}
		if n < math.MinInt32 || n > math.MaxInt32 {
			return v, fmt.Errorf("integer %s out of range (INT32)", text)
		}
		if err := checkRange(d, float64(n), strconv.FormatInt(n, 10)); err != nil {
			return v, err
		}
		v.Int, v.Real, v.Text = n, float64(n), strconv.FormatInt(n, 10)
	case Real:
		if text == "" {
			return v, errors.New("empty value, want a real number")
		}
		f, err := strconv.ParseFloat(text, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || !isDecimal(text) {
			return v, fmt.Errorf("invalid real number %q", Clip(text))
		}
		if err := checkRange(d, f, text); err != nil {
			return v, err
		}
		v.Real, v.Text = f, formatReal(f)
	case Boolean:
		switch strings.ToLower(text) {
		case "yes":
			v.Bool, v.Text = true, "yes"
		case "no":
			v.Bool, v.Text = false, "no"
		default:
			return v, fmt.Errorf("invalid boolean %q (want yes or no)", Clip(text))
		}
	case String:
		if len(d.Enum) > 0 {
			e, err := matchEnum(d, text)
			if err != nil {
				return v, err
			}
			text = e
		}
		v.Text = text
	default:
		return v, fmt.Errorf("config: parseScalar on %s", d.Type)
	}
	return v, nil
}

// isDecimal accepts the plain decimal forms of a DOUBLE: digits with an
// optional sign, point and exponent (no hex floats, no underscores).
func isDecimal(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789+-.eE", r) {
			return false
		}
	}
	return true
}

func checkRange(d *ParamDef, f float64, text string) error {
	if d.HasMin && f < d.Min || d.HasMax && f > d.Max {
		return fmt.Errorf("value %s out of range %s", text, rangeText(d))
	}
	return nil
}

// rangeText formats the valid range of d ("[1, 2147483647]", "[0.0, 1.0]").
func rangeText(d *ParamDef) string {
	f := func(x float64) string {
		if d.Type == Real {
			if x == maxReal {
				return "max"
			}
			return formatReal(x)
		}
		return strconv.FormatInt(int64(x), 10)
	}
	return "[" + f(d.Min) + ", " + f(d.Max) + "]"
}

// matchEnum returns the enumeration value equal to s, ignoring case.
func matchEnum(d *ParamDef, s string) (string, error) {
	for _, e := range d.Enum {
		if strings.EqualFold(e, s) {
			return e, nil
		}
	}
	return "", fmt.Errorf("invalid value %q (want one of %s)%s", Clip(s), strings.Join(d.Enum, ", "), suggest(s, d.Enum))
}
