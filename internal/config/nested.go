package config

// NestedQuantifier reports whether the regular expression re repeats a
// group that itself holds a repetition, as in (a+)+, (a*)*, (\w+\s?)*
// or (x+){2,}: the shape that makes a backtracking engine (.NET's,
// regexp2) take time exponential in the input on a failing match. It is a
// syntactic check for `trawl config check`, not a proof either way.
func NestedQuantifier(re string) bool {
	type group struct{ quantified bool }
	var stack []group
	inClass := false
	for i := 0; i < len(re); i++ {
		c := re[i]
		switch {
		case c == '\\':
			i++ // an escaped character is a literal
			if i < len(re) && isQuant(re, i+1) && len(stack) > 0 {
				stack[len(stack)-1].quantified = true
			}
			continue
		case inClass:
			if c == ']' {
				inClass = false
				if isQuant(re, i+1) && len(stack) > 0 {
					stack[len(stack)-1].quantified = true
				}
			}
			continue
		case c == '[':
			inClass = true
		case c == '(':
			stack = append(stack, group{})
		case c == ')':
			if len(stack) == 0 {
				continue
			}
			g := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if g.quantified && isQuant(re, i+1) {
				return true
			}
			if (g.quantified || isQuant(re, i+1)) && len(stack) > 0 {
				stack[len(stack)-1].quantified = true
			}
		default:
			if c != '+' && c != '*' && c != '?' && c != '{' && isQuant(re, i+1) && len(stack) > 0 {
				stack[len(stack)-1].quantified = true
			}
		}
	}
	return false
}

// isQuant reports whether re[i:] starts with an unbounded quantifier: +,
// * or {n,}.
func isQuant(re string, i int) bool {
	if i >= len(re) {
		return false
	}
	switch re[i] {
	case '+', '*':
		return true
	case '{':
		for j := i + 1; j < len(re); j++ {
			if re[j] == '}' {
				return re[j-1] == ','
			}
			if (re[j] < '0' || re[j] > '9') && re[j] != ',' {
				return false
			}
		}
	}
	return false
}
