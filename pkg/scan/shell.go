package scan

import (
	"bytes"
	"strings"
)

// The shell reading of a text: a shell reads c''url, "b"ash, cur\l as curl
// and bash, ${IFS} as a blank, and $c as the word c was set to, so a
// payload written that way reads whole only once they are undone.

// Bounds on the variables the shell reading follows: how many, and how
// long a value.
const (
	maxShellVars    = 64
	maxShellVarSize = 64
)

// shellView returns the lines of v that a shell reads otherwise than they
// are written (quotes or escapes inside a word, $IFS, a variable the text
// sets to a plain word), as the shell reads them; nil when there are none.
func shellView(v *view) *view {
	t := v.text
	if !bytes.ContainsAny(t, "'\"\\$") {
		return nil
	}
	vars := shellVars(t)
	var out *view
	var scratch []byte
	// The next place each byte a shell reading starts with is (-1: none
	// left), so that only the lines holding one are read.
	var next [len(shellMarks)]int
	for k, c := range shellMarks {
		next[k] = indexByteFrom(t, 0, c)
	}
	for {
		at := earliest(next[:])
		if at < 0 {
			break
		}
		if !shellCandidateAt(t, at, vars != nil) {
			for k, n := range next {
				if n == at {
					next[k] = indexByteFrom(t, at+1, shellMarks[k])
				}
			}
			continue
		}
		start := bytes.LastIndexByte(t[:at], '\n') + 1
		end := len(t)
		if i := bytes.IndexByte(t[at:], '\n'); i >= 0 {
			end = at + i
		}
		var changed bool
		if scratch, changed = shellRead(scratch[:0], t[start:end], vars); changed {
			if out == nil {
				out = &view{}
			}
			out.orig = append(out.orig, v.line(start))
			out.lines = append(out.lines, len(out.text))
			out.text = append(append(out.text, scratch...), '\n')
		}
		for k, n := range next {
			if n >= 0 && n <= end {
				next[k] = indexByteFrom(t, end+1, shellMarks[k])
			}
		}
	}
	return out
}

// shellMarks are the bytes a shell reading that differs starts at.
var shellMarks = [...]byte{'\'', '"', '\\', '$'}

func indexByteFrom(t []byte, i int, c byte) int {
	if i >= len(t) {
		return -1
	}
	if k := bytes.IndexByte(t[i:], c); k >= 0 {
		return i + k
	}
	return -1
}

// shellVars are the variables t sets to a plain word (name=word, at the
// start of a command, the word bare or quoted) or to a download's output
// (name=$(curl …)), the last setting of each: "$x" then reads as the
// download itself, so eval "$x" is eval "$(curl …)".
func shellVars(t []byte) map[string][]byte {
	var vars map[string][]byte
	for i := 0; ; {
		k := bytes.IndexByte(t[i:], '=')
		if k < 0 {
			return vars
		}
		eq := i + k
		i = eq + 1
		n := eq
		for n > 0 && word[t[n-1]] {
			n--
		}
		if n == eq || '0' <= t[n] && t[n] <= '9' || n > 0 && !commandStart(t, n) {
			continue
		}
		name := t[n:eq]
		val, ok := plainWord(t[eq+1:])
		if !ok {
			sub, isFetch := fetchSubstitution(t[eq+1:], vars)
			if !isFetch {
				continue
			}
			// As a shell reads it (c''url, $x), and under any case of
			// its name, so that a disguise of the name still reads.
			val, _ = shellRead(nil, sub, vars)
			name = bytes.ToLower(name)
		}
		if vars == nil {
			vars = map[string][]byte{}
		}
		if _, seen := vars[string(name)]; seen || len(vars) < maxShellVars {
			vars[string(name)] = val
		}
	}
}

// commandStart reports whether a word starting at n of t starts a command
// (or follows export, local, declare or set).
func commandStart(t []byte, n int) bool {
	j := n
	for j > 0 && (t[j-1] == ' ' || t[j-1] == '\t') {
		j--
	}
	if j == 0 {
		return true
	}
	switch t[j-1] {
	case '\n', ';', '&', '|', '(', '{', '`':
		return true
	}
	for _, w := range []string{"export", "local", "declare", "readonly", "set"} {
		if j >= len(w) && string(t[j-len(w):j]) == w && (j == len(w) || !word[t[j-len(w)-1]]) {
			return true
		}
	}
	return false
}

// plainWord reads the word a variable is set to: letters, digits and
// ./:_-, bare or in one pair of quotes, at most maxShellVarSize long.
func plainWord(b []byte) ([]byte, bool) {
	q := byte(0)
	if len(b) > 0 && (b[0] == '\'' || b[0] == '"') {
		q, b = b[0], b[1:]
	}
	n := 0
	for n < len(b) && n <= maxShellVarSize && (word[b[n]] || b[n] == '.' || b[n] == '/' || b[n] == ':' || b[n] == '-') {
		n++
	}
	if n == 0 || n > maxShellVarSize {
		return nil, false
	}
	if q != 0 {
		if n == len(b) || b[n] != q {
			return nil, false
		}
	} else if n < len(b) && b[n] != ' ' && b[n] != '\t' && b[n] != ';' && b[n] != '&' && b[n] != '|' && b[n] != ')' {
		return nil, false
	}
	return b[:n], true
}

// maxFetchSubstitution bounds the command substitution a variable may
// stand for.
const maxFetchSubstitution = 512

// fetchSubstitution reads a command substitution of curl, wget or fetch
// ($(…) or `…`, bare or in double quotes) that a variable is set to: the
// substitution, as written.
func fetchSubstitution(b []byte, vars map[string][]byte) ([]byte, bool) {
	if len(b) > 0 && b[0] == '"' {
		b = b[1:]
	}
	var body int
	switch {
	case len(b) > 2 && b[0] == '$' && b[1] == '(':
		body = 2
	case len(b) > 1 && b[0] == '`':
		body = 1
	default:
		return nil, false
	}
	i := body
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	if !fetchCommand(b[i:], vars) {
		return nil, false
	}
	depth := 0
	for n := i; n < len(b) && n < maxFetchSubstitution; n++ {
		switch c := b[n]; {
		case c == '\n':
			return nil, false
		case body == 1 && c == '`':
			return b[:n+1], true
		case body == 2 && c == '(':
			depth++
		case body == 2 && c == ')':
			if depth == 0 {
				return b[:n+1], true
			}
			depth--
		}
	}
	return nil, false
}

// fetchCommand reports whether b starts with the word curl, wget or fetch,
// as a shell reads it (quotes and escapes inside it undone, or a variable
// of vars set to it).
func fetchCommand(b []byte, vars map[string][]byte) bool {
	var w []byte
	if len(b) > 1 && b[0] == '$' {
		n := 1
		for n < len(b) && word[b[n]] {
			n++
		}
		w = vars[string(b[1:n])]
	} else {
		for n := 0; n < len(b) && len(w) <= 5; n++ {
			if c := b[n]; word[c] {
				w = append(w, c)
			} else if c != '\'' && c != '"' && c != '\\' {
				break
			}
		}
	}
	for _, f := range []string{"curl", "wget", "fetch"} {
		if bytes.EqualFold(w, []byte(f)) {
			return true
		}
	}
	return false
}

// shellCandidateAt is a cheap test of whether shellRead may change the
// line holding t[i], one of shellMarks: a quote or backslash with a word
// byte before it and a word byte or a quote after it, or a $ that may
// start $IFS, ${…}, $@, $* or (when the text sets any) a variable. A
// newline is neither a word byte nor a quote, so the line's bounds need no
// test of their own.
func shellCandidateAt(t []byte, i int, vars bool) bool {
	if i+1 >= len(t) {
		return false
	}
	switch t[i] {
	case '\'', '"', '\\':
		return i > 0 && word[t[i-1]] && (word[t[i+1]] || t[i+1] == '\'' || t[i+1] == '"')
	case '$':
		switch n := t[i+1]; {
		case n == '{', n == 'I', n == 'i', n == '@', n == '*', vars && word[n]:
			return true
		}
	}
	return false
}

// shellRead appends one line to out as a shell reads it, and reports
// whether that differs from the line.
func shellRead(out, line []byte, vars map[string][]byte) ([]byte, bool) {
	changed := false
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == '$':
			if n, with, ok := dollar(line, i, vars); ok {
				out = append(out, with...)
				i += n
				changed = true
				continue
			}
		case word[c] || c == '\'' || c == '"' || c == '\\':
			// A token of word bytes, quotes and escapes: undone when a
			// quote or an escape sits inside the word.
			j := i
			for j < len(line) && (word[line[j]] || line[j] == '\'' || line[j] == '"' || line[j] == '\\' && j+1 < len(line) && line[j+1] != ' ') {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			tok := line[i:j]
			if inWordQuote(tok) {
				for k := 0; k < len(tok); k++ {
					switch tok[k] {
					case '\'', '"':
					case '\\':
						if k+1 < len(tok) {
							k++
							out = append(out, tok[k])
						}
					default:
						out = append(out, tok[k])
					}
				}
				changed = true
			} else {
				out = append(out, tok...)
			}
			if j == i {
				j++
				out = append(out, c)
			}
			i = j
			continue
		}
		out = append(out, c)
		i++
	}
	return out, changed
}

// inWordQuote reports whether a token has a quote or an escape with a
// word byte on each side (quotes aside), other than the one apostrophe
// of an English contraction (don't, it's, we're).
func inWordQuote(tok []byte) bool {
	quotes, inside := 0, false
	for k, c := range tok {
		if c != '\'' && c != '"' && c != '\\' {
			continue
		}
		quotes++
		before := bytes.IndexFunc(tok[:k], func(r rune) bool { return r < 0x80 && word[byte(r)] }) >= 0
		after := bytes.IndexFunc(tok[k+1:], func(r rune) bool { return r < 0x80 && word[byte(r)] }) >= 0
		inside = inside || before && after
	}
	if !inside {
		return false
	}
	if quotes == 1 {
		if k := bytes.IndexByte(tok, '\''); k >= 0 {
			switch string(bytes.ToLower(tok[k+1:])) {
			case "t", "s", "re", "ve", "ll", "d", "m":
				return false
			}
		}
	}
	return true
}

// dollar reads an expansion at line[i] (a '$') that the shell reading
// undoes: $IFS or ${IFS…} (a blank), $@ or $* inside a word (nothing), or
// a variable of vars; n is how many bytes it spans.
func dollar(line []byte, i int, vars map[string][]byte) (n int, with []byte, ok bool) {
	rest := line[i+1:]
	if len(rest) > 0 && rest[0] == '{' {
		end := bytes.IndexByte(rest, '}')
		if end < 0 || end > 2*maxShellVarSize {
			return 0, nil, false
		}
		name := rest[1:end]
		if len(name) >= 3 && bytes.EqualFold(name[:3], []byte("IFS")) && (len(name) == 3 || !word[name[3]]) {
			return end + 2, []byte{' '}, true
		}
		if v, ok := lookup(vars, name); ok {
			return end + 2, v, true
		}
		return 0, nil, false
	}
	k := 0
	for k < len(rest) && word[rest[k]] {
		k++
	}
	switch {
	case k == 0 && len(rest) > 0 && (rest[0] == '@' || rest[0] == '*') && i > 0 && word[line[i-1]] && len(rest) > 1 && word[rest[1]]:
		return 2, nil, true
	case k == 3 && bytes.EqualFold(rest[:3], []byte("IFS")):
		// $IFS$9: a positional parameter after it expands to nothing.
		if len(rest) > 4 && rest[3] == '$' && '0' <= rest[4] && rest[4] <= '9' {
			return 6, []byte{' '}, true
		}
		return 4, []byte{' '}, true
	case k > 0:
		if v, ok := lookup(vars, rest[:k]); ok {
			return k + 1, v, true
		}
	}
	return 0, nil, false
}

// lookup is the value of the variable name, or of a download's output
// set under any case of it.
func lookup(vars map[string][]byte, name []byte) ([]byte, bool) {
	if v, ok := vars[string(name)]; ok {
		return v, true
	}
	v, ok := vars[strings.ToLower(string(name))]
	return v, ok
}
