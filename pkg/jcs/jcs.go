// Package jcs is the JSON Canonicalization Scheme (RFC 8785): one byte
// sequence for a JSON value, whatever the whitespace, the order of object
// members, the escapes of strings and the spelling of numbers, so that a
// signature over it survives a re-encoding. Objects are sorted by their
// member names as UTF-16 code units, strings escaped as ECMAScript's
// JSON.stringify escapes them, numbers written as its Number.toString
// writes a double.
package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInput is wrapped by every error about JSON that has no canonical form:
// invalid JSON, text that is not UTF-8, a string with a lone UTF-16
// surrogate escape, a duplicate member name at any level, a number beyond a
// double, text after the value.
var ErrInput = errors.New("jcs: no canonical form")

// Canonicalize returns the canonical form of the JSON text b.
func Canonicalize(b []byte) ([]byte, error) {
	out, _, err := canonicalize(b, "", false)
	return out, err
}

// Without returns the canonical form of the JSON object b without its
// top-level member name, and that member's canonical value (nil when b has
// no such member), from one reading of b: what is signed beside a
// signature kept in the document itself. b must be an object.
func Without(b []byte, name string) (rest, member []byte, err error) {
	return canonicalize(b, name, true)
}

func canonicalize(b []byte, omit string, omitting bool) ([]byte, []byte, error) {
	// encoding/json reads invalid UTF-8 and lone surrogates as U+FFFD, so
	// two different texts would share one canonical form: refused first.
	if err := checkText(b); err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(b))
	var removed []byte
	if omitting {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		if tok != json.Delim('{') {
			return nil, nil, fmt.Errorf("%w: not an object", ErrInput)
		}
		if removed, err = object(dec, &out, omit); err != nil {
			return nil, nil, err
		}
	} else if err := value(dec, &out); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("%w: text after the value", ErrInput)
	}
	return out.Bytes(), removed, nil
}

// checkText refuses text that is not UTF-8 and strings holding a \u
// escape of a UTF-16 surrogate that is not one half of a pair (RFC 8785
// section 3.2.2.2: such a string has no canonical form). b need not be
// valid JSON otherwise: the decoder judges that.
func checkText(b []byte) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("%w: the text is not UTF-8", ErrInput)
	}
	in := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && i+1 < len(b):
			i++
			if b[i] != 'u' {
				continue
			}
			u, ok := hex4(b[i+1:])
			if !ok {
				continue // the decoder refuses it
			}
			i += 4
			if !utf16.IsSurrogate(rune(u)) {
				continue
			}
			// A high half must be followed by the escape of a low half.
			if u < 0xdc00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				if lo, ok := hex4(b[i+3:]); ok && lo >= 0xdc00 && lo <= 0xdfff {
					i += 6
					continue
				}
			}
			return fmt.Errorf("%w: a lone UTF-16 surrogate \\u%04x", ErrInput, u)
		}
	}
	return nil
}

// hex4 reads the four hex digits b starts with.
func hex4(b []byte) (uint16, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return uint16(v), err == nil
}

// Marshal is json.Marshal's encoding of v in canonical form.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Canonicalize(b)
}

// value writes the next value of dec.
func value(dec *json.Decoder, out *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			_, err := object(dec, out, "")
			return err
		case '[':
			return array(dec, out)
		}
		return fmt.Errorf("%w: unexpected %q", ErrInput, t)
	case string:
		writeString(out, t)
	case json.Number:
		s, err := Number(t)
		if err != nil {
			return err
		}
		out.WriteString(s)
	case bool:
		out.WriteString(strconv.FormatBool(t))
	case nil:
		out.WriteString("null")
	}
	return nil
}

type member struct {
	name  string
	key   []uint16
	value []byte
}

// object writes the object whose '{' dec has read, without its member
// omit (when not ""), whose value it returns.
func object(dec *json.Decoder, out *bytes.Buffer, omit string) ([]byte, error) {
	var members []member
	var removed []byte
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInput, err)
		}
		name := tok.(string) // the decoder only yields strings as member names
		if seen[name] {
			return nil, fmt.Errorf("%w: the member name %q appears twice", ErrInput, name)
		}
		seen[name] = true
		var v bytes.Buffer
		if err := value(dec, &v); err != nil {
			return nil, err
		}
		if omit != "" && name == omit {
			removed = v.Bytes()
			continue
		}
		members = append(members, member{name: name, key: utf16.Encode([]rune(name)), value: v.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return nil, fmt.Errorf("%w: %w", ErrInput, err)
	}
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.key, b.key) })
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		writeString(out, m.name)
		out.WriteByte(':')
		out.Write(m.value)
	}
	out.WriteByte('}')
	return removed, nil
}

func array(dec *json.Decoder, out *bytes.Buffer) error {
	out.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			out.WriteByte(',')
		}
		if err := value(dec, out); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return fmt.Errorf("%w: %w", ErrInput, err)
	}
	out.WriteByte(']')
	return nil
}

// writeString writes s as JSON.stringify does: only '"', '\\' and the
// control characters are escaped, the short escapes where there is one,
// else \u00xx in lowercase hex; everything else is written as UTF-8.
func writeString(out *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	out.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			out.WriteRune(r) // the decoder already replaced invalid UTF-8
			i += n
			continue
		}
		switch c {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if c < 0x20 {
				out.WriteString(`\u00`)
				out.WriteByte(hex[c>>4])
				out.WriteByte(hex[c&0xf])
			} else {
				out.WriteByte(c)
			}
		}
		i++
	}
	out.WriteByte('"')
}

// Number is the canonical spelling of a JSON number: the double it
// denotes, as ECMAScript's Number.prototype.toString writes it (the
// shortest digits that read back as the same double; plain notation from
// 1e-6 up to 1e21, exponential beyond).
func Number(n json.Number) (string, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("%w: the number %s is not a finite double", ErrInput, clip(string(n)))
	}
	return FormatDouble(f), nil
}

// FormatDouble writes a finite double as Number.prototype.toString does.
func FormatDouble(f float64) string {
	if f == 0 {
		return "0" // -0 too
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// d.ddd…e±x: the shortest digits, and the exponent of the first.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1 // f = 0.digits × 10^n
	var s string
	switch {
	case k <= n && n <= 21:
		s = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		s = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		s = "0." + strings.Repeat("0", -n) + digits
	default:
		s = digits[:1]
		if k > 1 {
			s += "." + digits[1:]
		}
		if n-1 >= 0 {
			s += "e+" + strconv.Itoa(n-1)
		} else {
			s += "e" + strconv.Itoa(n-1)
		}
	}
	return sign + s
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
