package config

// stripJSONC blanks the comments (// and /* */) and trailing commas that
// VS Code's and other editors' JSON-with-comments files allow, leaving
// plain JSON. Offsets are kept (everything removed becomes spaces, line
// breaks stay), so that syntax errors point at the right line and column.
// Text inside strings is left alone.
func stripJSONC(in []byte) []byte {
	var out []byte // allocated on the first change
	set := func(i int, c byte) {
		if out == nil {
			out = append([]byte(nil), in...)
		}
		out[i] = c
	}
	lastComma := -1 // a comma that may turn out to be trailing
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch {
		case c == '"':
			lastComma = -1
			for i++; i < len(in) && in[i] != '"'; i++ {
				if in[i] == '\\' {
					i++
				}
			}
		case c == '/' && i+1 < len(in) && in[i+1] == '/':
			for ; i < len(in) && in[i] != '\n'; i++ {
				set(i, ' ')
			}
		case c == '/' && i+1 < len(in) && in[i+1] == '*':
			set(i, ' ')
			set(i+1, ' ')
			for i += 2; i < len(in); i++ {
				if in[i] == '*' && i+1 < len(in) && in[i+1] == '/' {
					set(i, ' ')
					set(i+1, ' ')
					i++
					break
				}
				if in[i] != '\n' {
					set(i, ' ')
				}
			}
		case c == ',':
			lastComma = i
		case c == '}' || c == ']':
			if lastComma >= 0 {
				set(lastComma, ' ')
			}
			lastComma = -1
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			lastComma = -1
		}
	}
	if out == nil {
		return in
	}
	return out
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(b []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := 0; i < len(b) && int64(i) < off; i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
