package jsonschema

import (
	"bytes"
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// decimal is an exact JSON number: 0.digits × 10^exp, negated when neg.
// digits has no leading or trailing zeros; it is empty for zero. Numbers
// are compared exactly this way, as santhosh-tekuri/jsonschema does with
// big.Rat, but without allocating.
type decimal struct {
	neg    bool
	digits []byte
	exp    int
}

// maxExp bounds exponents so that sums cannot overflow, even where int
// has 32 bits; a number this far from 1 is out of every float64 bound
// anyway.
const maxExp = 1 << 28

// parseDecimal reads the valid number token tok into d, using buf for the
// digits.
func parseDecimal(tok []byte, buf []byte) (d decimal, _ []byte) {
	i := 0
	if tok[0] == '-' {
		d.neg = true
		i++
	}
	buf = buf[:0]
	intDigits := 0
	for ; i < len(tok) && tok[i] >= '0' && tok[i] <= '9'; i++ {
		if len(buf) == 0 && tok[i] == '0' {
			continue
		}
		buf = append(buf, tok[i])
		intDigits++
	}
	exp := intDigits
	if i < len(tok) && tok[i] == '.' {
		for i++; i < len(tok) && tok[i] >= '0' && tok[i] <= '9'; i++ {
			if len(buf) == 0 && tok[i] == '0' {
				exp--
				continue
			}
			buf = append(buf, tok[i])
		}
	}
	if i < len(tok) && (tok[i] == 'e' || tok[i] == 'E') {
		i++
		eneg := false
		if tok[i] == '+' || tok[i] == '-' {
			eneg = tok[i] == '-'
			i++
		}
		e := 0
		for ; i < len(tok); i++ {
			if e < maxExp {
				e = e*10 + int(tok[i]-'0')
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	for len(buf) > 0 && buf[len(buf)-1] == '0' {
		buf = buf[:len(buf)-1]
	}
	d.digits = buf
	if len(buf) == 0 {
		d.neg, d.exp = false, 0
	} else {
		d.exp = exp
	}
	return d, buf
}

// int64 returns d as an int64 when it is an integer of at most 18 digits.
func (d decimal) int64() (int64, bool) {
	if !d.isInteger() || d.exp > 18 {
		return 0, false
	}
	var v int64
	for k := 0; k < d.exp; k++ {
		v *= 10
		if k < len(d.digits) {
			v += int64(d.digits[k] - '0')
		}
	}
	if d.neg {
		v = -v
	}
	return v, true
}

// plainInt parses a number token that is an integer of at most 18 digits
// without fraction or exponent.
func plainInt(tok []byte) (int64, bool) {
	neg := tok[0] == '-'
	if neg {
		tok = tok[1:]
	}
	if len(tok) > 18 {
		return 0, false
	}
	var v int64
	for _, c := range tok {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// decimalOf returns the exact value of the shortest decimal form of f,
// which is how f appears in a marshalled schema.
func decimalOf(f float64) decimal {
	d, _ := parseDecimal(strconv.AppendFloat(nil, f, 'g', -1, 64), nil)
	return d
}

func (d decimal) isZero() bool { return len(d.digits) == 0 }

// isInteger reports whether d has no fractional part.
func (d decimal) isInteger() bool { return d.isZero() || d.exp >= len(d.digits) }

// cmp compares d and e exactly.
func (d decimal) cmp(e decimal) int {
	switch {
	case d.isZero() && e.isZero():
		return 0
	case d.isZero():
		if e.neg {
			return 1
		}
		return -1
	case e.isZero():
		if d.neg {
			return -1
		}
		return 1
	case d.neg != e.neg:
		if d.neg {
			return -1
		}
		return 1
	}
	c := d.cmpAbs(e)
	if d.neg {
		return -c
	}
	return c
}

func (d decimal) cmpAbs(e decimal) int {
	if d.exp != e.exp {
		if d.exp < e.exp {
			return -1
		}
		return 1
	}
	return bytes.Compare(d.digits, e.digits)
}

// String returns d in plain JSON number notation, for messages.
func (d decimal) String() string {
	if d.isZero() {
		return "0"
	}
	var b []byte
	if d.neg {
		b = append(b, '-')
	}
	switch {
	case d.exp > 0 && d.exp <= 21:
		if len(d.digits) <= d.exp {
			b = append(b, d.digits...)
			b = append(b, bytes.Repeat([]byte{'0'}, d.exp-len(d.digits))...)
		} else {
			b = append(b, d.digits[:d.exp]...)
			b = append(b, '.')
			b = append(b, d.digits[d.exp:]...)
		}
	case d.exp <= 0 && d.exp > -7:
		b = append(b, "0."...)
		b = append(b, bytes.Repeat([]byte{'0'}, -d.exp)...)
		b = append(b, d.digits...)
	default:
		b = append(b, d.digits[0])
		if len(d.digits) > 1 {
			b = append(b, '.')
			b = append(b, d.digits[1:]...)
		}
		b = append(b, 'e')
		b = strconv.AppendInt(b, int64(d.exp-1), 10)
	}
	return string(b)
}

// isMultipleOf reports whether d is an integer multiple of m (m > 0),
// exactly.
func (d decimal) isMultipleOf(m decimal) bool {
	if d.isZero() {
		return true
	}
	// d = A × 10^ka and m = M × 10^km with integers A and M.
	ka := d.exp - len(d.digits)
	km := m.exp - len(m.digits)
	shift := ka - km // d/m = (A/M) × 10^shift
	if shift < 0 && len(d.digits) < len(m.digits)-shift {
		return false // A < M × 10^-shift, and A is not zero
	}
	if a, ok := digitsUint(d.digits); ok {
		if mm, ok := digitsUint(m.digits); ok {
			switch {
			case shift >= 0 && shift <= 19:
				hi, lo := bits.Mul64(a, pow10[shift])
				if hi < mm {
					_, rem := bits.Div64(hi, lo, mm)
					return rem == 0
				}
			case shift < 0 && -shift <= 19:
				hi, lo := bits.Mul64(mm, pow10[-shift])
				if hi == 0 {
					return a%lo == 0
				}
				return false // M × 10^-shift does not fit in 64 bits, but A does
			}
		}
	}
	A := new(big.Int)
	A.SetString(string(d.digits), 10)
	M := new(big.Int)
	M.SetString(string(m.digits), 10)
	ten := big.NewInt(10)
	if shift >= 0 {
		// M divides A × 10^shift?
		p := new(big.Int).Exp(ten, big.NewInt(int64(shift)), M)
		p.Mul(p, A)
		return p.Mod(p, M).Sign() == 0
	}
	M.Mul(M, new(big.Int).Exp(ten, big.NewInt(int64(-shift)), nil))
	return new(big.Int).Mod(A, M).Sign() == 0
}

var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

func digitsUint(digits []byte) (uint64, bool) {
	if len(digits) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range digits {
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// finite reports whether f can be a schema number.
func finite(f float64) bool { return !math.IsInf(f, 0) && !math.IsNaN(f) }
