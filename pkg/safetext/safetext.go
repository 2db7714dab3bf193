// Package safetext renders untrusted text (bucket keys, names, the messages
// that quote them) so that it cannot act on a terminal or hide in a log. An
// S3 key may hold any Unicode: a C1 control (U+009B starts a terminal
// control sequence), a bidi override (U+202E shows "exe.md" as "dm.exe") or
// a zero-width character would reach an operator's screen as something other
// than what it is.
//
// People get Go-syntax escapes (Token, Text); machines get JSON whose
// strings keep the exact value but spell every such character as a \uXXXX
// escape (JSON, NewJSONWriter), so a log search by the S3 key still matches.
package safetext

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Unsafe reports whether r must not reach a terminal or a log as itself:
// everything strconv.IsPrint refuses (controls, format characters such as
// bidi overrides and zero-width spaces, line and paragraph separators,
// spaces other than U+0020, unassigned and private-use code points) except
// the ASCII space.
func Unsafe(r rune) bool { return r != ' ' && !strconv.IsPrint(r) }

// Invisible reports whether r shows as nothing, or changes how what
// follows it shows: a format character (bidi embeddings, overrides and
// isolates such as U+202E, zero-width spaces and joiners, the byte order
// mark, tag characters) or another default-ignorable code point. Names
// refuse them, and so does prose a person picks from (descriptions).
func Invisible(r rune) bool {
	return r >= utf8.RuneSelf && (unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r))
}

// Blank reports whether r shows as an empty cell although it is neither a
// space nor default-ignorable (so not Invisible): U+2800 BRAILLE PATTERN
// BLANK, which passes for a space where a space would be trimmed or seen.
func Blank(r rune) bool { return r == 0x2800 }

// VariationSelector reports whether r selects a variant of the character
// before it: U+FE00–FE0F, U+E0100–E01EF and the Mongolian free variation
// selectors U+180B–180D and U+180F. A selector shows as nothing.
func VariationSelector(r rune) bool { return unicode.Is(unicode.Variation_Selector, r) }

// HiddenAt returns the byte index of the first character of s that hides
// text, and that character, or -1 and 0 when none does: an Invisible or
// Blank one, or a variation selector other than one U+FE0E or U+FE0F
// (text or emoji presentation) directly after a character that has those
// presentations (takesVariation). The variation selectors are
// 256 invisible values, so a run of them after one character is a byte
// each of text that shows as that character alone: "ignore previous
// instructions" fits after an emoji. The ideographic selectors
// U+E0100–E01EF and the other standardized ones are refused even alone; a
// person can write the variant itself.
func HiddenAt(s string) (int, rune) {
	var prev rune // the character before r; 0 at the start
	for i, r := range s {
		switch {
		case Invisible(r), Blank(r):
			return i, r
		case VariationSelector(r):
			next, _ := utf8.DecodeRuneInString(s[i+utf8.RuneLen(r):])
			if (r != 0xfe0e && r != 0xfe0f) || !takesVariation(prev, next) {
				return i, r
			}
		}
		prev = r
	}
	return -1, 0
}

// takesVariation reports whether a presentation selector may follow r
// (next being the character after the selector): a symbol (the emoji and
// the other characters with a text and an emoji form are symbols, but
// for the few listed in presentable), or a digit, '#' or '*' starting a
// keycap (the selector followed by U+20E3). Not after a letter, a space,
// a mark, a selector or nothing: alternating U+FE0E and U+FE0F after
// ordinary letters would carry a hidden bit each.
func takesVariation(r, next rune) bool {
	switch {
	case unicode.Is(unicode.S, r), presentable[r]:
		return true
	case (r >= '0' && r <= '9') || r == '#' || r == '*':
		return next == 0x20e3
	}
	return false
}

// presentable are the characters with an emoji presentation that are not
// symbols: ‼ ⁉ ℹ 〰 〽.
var presentable = map[rune]bool{0x203c: true, 0x2049: true, 0x2139: true, 0x3030: true, 0x303d: true}

// Control reports whether r is a control character other than the tab and
// the line feed prose may hold: the other C0 controls (a carriage return
// rewrites a terminal line), DEL, the C1 controls (U+009B starts a terminal
// control sequence), and the line and paragraph separators.
func Control(r rune) bool {
	return (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029
}

// Token returns s as it is when it prints as one plain word, else quoted in
// Go syntax with every unsafe character escaped: for values written among
// others on a space-separated line (keys, names, paths), which must stay
// one field whatever they hold.
func Token(s string) string {
	if s == "" || strings.IndexFunc(s, func(r rune) bool { return r == ' ' || r == utf8.RuneError || Unsafe(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

// Text escapes the unsafe characters of free text in Go syntax (\u202e,
// \x1b, \n) and leaves the rest, quotes and spaces included, as it is: for
// messages, which quote the keys they name themselves.
func Text(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r == utf8.RuneError || Unsafe(r) }) < 0 {
		return s
	}
	var b strings.Builder
	for i, w := 0, 0; i < len(s); i += w {
		r, n := utf8.DecodeRuneInString(s[i:])
		w = n
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case Unsafe(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+n])
		}
	}
	return b.String()
}

// JSON rewrites encoded JSON so that no unsafe character appears as itself:
// DEL and each one outside ASCII become a \uXXXX escape (a surrogate pair
// beyond U+FFFF). Those characters occur in valid JSON only inside strings,
// so the documents decode to the same values; encoding/json and log/slog
// already escape the other ASCII controls, and U+2028 and U+2029, but not
// DEL, C1 controls or format characters. b is returned as it is when nothing needs
// escaping.
func JSON(b []byte) []byte {
	i := indexUnsafe(b)
	if i < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for len(b[i:]) > 0 {
		r, n := utf8.DecodeRune(b[i:])
		if escapesInJSON(r, n) {
			out = appendEscape(out, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

func indexUnsafe(b []byte) int {
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf && b[i] != 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if escapesInJSON(r, n) {
			return i
		}
		i += n
	}
	return -1
}

// escapesInJSON reports whether the rune r, n bytes long, is rewritten: DEL
// and the unsafe runes outside ASCII (the ASCII controls below DEL are
// already escapes, or the whitespace between values).
func escapesInJSON(r rune, n int) bool {
	return r == 0x7f || (r >= utf8.RuneSelf && n > 1 && Unsafe(r))
}

func appendEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		return fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
	}
	return fmt.Appendf(out, `\u%04x`, r)
}

// NewJSONWriter returns a writer that passes each write to w through JSON.
// Each write must hold whole JSON values (log/slog's JSON handler writes one
// record per call, encoding/json's Encoder one value), so no character is
// split between two writes.
func NewJSONWriter(w io.Writer) io.Writer { return &jsonWriter{w: w} }

type jsonWriter struct{ w io.Writer }

func (j *jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}
