package jsonschema

// The validator reads instances with jsonfast's strict tokenizer, the one
// under jsonrpc's decoder: RFC 8259, valid UTF-8 and valid escapes, lone
// surrogates refused (as json v2 refuses them). It works on offsets into
// the instance and never copies. What is left here is the validator's own
// rule on numbers.

// maxNumberExp bounds the exponent of numbers in instances: a number such
// as 1e999999999 is valid JSON but its exact value is too costly to compute
// (santhosh-tekuri/jsonschema fails on it), and no Go number holds it.
const maxNumberExp = 1000

// exponentInRange reports whether the exponent of the valid number token
// tok, if it has one, is within ±maxNumberExp.
func exponentInRange(tok []byte) bool {
	for i := len(tok) - 1; i > 0; i-- {
		c := tok[i]
		if c >= '0' && c <= '9' || c == '+' || c == '-' {
			continue
		}
		if c != 'e' && c != 'E' {
			return true
		}
		e := 0
		for _, d := range tok[i+1:] {
			if d >= '0' && d <= '9' {
				e = e*10 + int(d-'0')
				if e > maxNumberExp {
					return false
				}
			}
		}
		return true
	}
	return true
}
