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
// invalid JSON, a duplicate member name, a number beyond a double, text
// after the value.
var ErrInput = errors.New("jcs: no canonical form")

// Canonicalize returns the canonical form of the JSON text b.
func Canonicalize(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	out.Grow(len(b))
	if err := value(dec, &out); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: text after the value", ErrInput)
	}
	return out.Bytes(), nil
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
			return object(dec, out)
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

func object(dec *json.Decoder, out *bytes.Buffer) error {
	var members []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInput, err)
		}
		name := tok.(string) // the decoder only yields strings as member names
		if seen[name] {
			return fmt.Errorf("%w: the member name %q appears twice", ErrInput, name)
		}
		seen[name] = true
		var v bytes.Buffer
		if err := value(dec, &v); err != nil {
			return err
		}
		members = append(members, member{name: name, key: utf16.Encode([]rune(name)), value: v.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return fmt.Errorf("%w: %w", ErrInput, err)
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
	return nil
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
