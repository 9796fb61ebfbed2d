package marshal

// Decode decodes the one value that data holds, within DefaultLimits. Bytes
// after the value are an error wrapping ErrTrailing (CPython's
// marshal.loads ignores them; use DecodeLimits to do the same).
func Decode(data []byte) (Value, error) {
	v, n, err := DecodeLimits(data, DefaultLimits())
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, errAt(n, ErrTrailing, "trailing data after the value")
	}
	return v, nil
}

// DecodeLimits decodes the first value in data within lim and returns it
// with the number of bytes it took. Zero fields of lim take their
// defaults. The value does not alias data (its strings share one copy of
// it: treat them as immutable).
func DecodeLimits(data []byte, lim Limits) (Value, int, error) {
	r := Reader{data: data, lim: lim.withDefaults()}
	v, err := r.ReadValue()
	if err != nil {
		return nil, r.off, err
	}
	return v, r.off, nil
}
