package safetext

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// hostile holds a C1 control sequence introducer, a bidi override, a
// zero-width space, a BOM, a tag character (beyond the BMP), a line
// separator, an escape, a tab and a non-breaking space.
const hostile = "skills/\u009b31m\u202egpj.md\u200b\ufeff\U000e0041\u2028\x1b\t\u00a0x\x7f.md"

func TestToken(t *testing.T) {
	for in, want := range map[string]string{
		"skills/a.md":  "skills/a.md",
		"café.md":      "café.md",
		"my skill.zip": `"my skill.zip"`,
		"":             `""`,
		"a\nb":         `"a\nb"`,
		"bad\xffutf8":  `"bad\xffutf8"`,
		hostile:        `"skills/\u009b31m\u202egpj.md\u200b\ufeff\U000e0041\u2028\x1b\t\u00a0x\x7f.md"`,
	} {
		if got := Token(in); got != want {
			t.Errorf("Token(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestText(t *testing.T) {
	in := `name_mismatch: "` + hostile + `" differs`
	want := `name_mismatch: "skills/\u009b31m\u202egpj.md\u200b\ufeff\U000e0041\u2028\x1b\t\u00a0x\x7f.md" differs`
	if got := Text(in); got != want {
		t.Errorf("Text = %s\nwant   %s", got, want)
	}
	if got := Text("plain \"quoted\" text é"); got != "plain \"quoted\" text é" {
		t.Errorf("Text changed safe text: %s", got)
	}
	if got := Text("bad\xff"); got != `bad\xff` {
		t.Errorf("Text(invalid UTF-8) = %s", got)
	}
}

// TestJSONKeepsTheValueAndEscapesTheCharacters: what encoding/json and
// log/slog write raw (C1 controls, format characters) is escaped; the
// decoded value is exactly the key.
func TestJSONKeepsTheValueAndEscapesTheCharacters(t *testing.T) {
	raw, err := json.Marshal(map[string]string{"key": hostile})
	if err != nil {
		t.Fatal(err)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(NewJSONWriter(&logged), nil)).Info("rejected", "key", hostile)
	for name, b := range map[string][]byte{"encoding/json": JSON(raw), "log/slog": logged.Bytes()} {
		for _, r := range []rune{0x9b, 0x202e, 0x200b, 0xfeff, 0xe0041, 0x2028, 0x1b, 0xa0, 0x7f} {
			if bytes.ContainsRune(b, r) {
				t.Errorf("%s: %U written raw: %s", name, r, b)
			}
		}
		for _, esc := range []string{`\u009b`, `\u202e`, `\u200b`, `\ufeff`, `\udb40\udc41`, `\u00a0`, `\u007f`} {
			if !bytes.Contains(bytes.ToLower(b), []byte(esc)) {
				t.Errorf("%s: no %s in %s", name, esc, b)
			}
		}
		line := bytes.TrimSuffix(b, []byte("\n"))
		var got struct{ Key string }
		if err := json.Unmarshal(line, &got); err != nil || got.Key != hostile {
			t.Errorf("%s: decodes to %q, %v; want the exact key", name, got.Key, err)
		}
	}
	if plain := []byte(`{"key":"café"}` + "\n"); !bytes.Equal(JSON(plain), plain) {
		t.Errorf("JSON changed safe JSON: %s", JSON(plain))
	}
	if !strings.HasSuffix(logged.String(), "\n") {
		t.Error("the writer dropped the line's newline")
	}
}

// TestHiddenAt: what shows as nothing is found, a run of variation
// selectors included (each is a byte of hidden text), while one emoji or
// text presentation selector after its base character is not.
func TestHiddenAt(t *testing.T) {
	// "hi" as variation selectors after an emoji: U+E0100 + 'h'-16, …
	smuggled := "nice \U0001F600" + string(rune(0xe0100+'h'-16)) + string(rune(0xe0100+'i'-16))
	for in, want := range map[string]int{
		"plain text, café":             -1,
		"a heart \u2764\ufe0f here":    -1, // emoji presentation
		"keycap 1\ufe0f\u20e3":         -1,
		"text style \u2764\ufe0e":      -1,
		smuggled:                       len("nice \U0001F600"),
		"two \U0001F600\ufe0f\ufe0f":   len("two \U0001F600\ufe0f"),
		"run \u2764\ufe01\ufe02":       len("run \u2764"),
		"\ufe0f at the start":          0,
		"after a space \ufe0f":         len("after a space "),
		"ideographic \u845b\U000e0100": len("ideographic \u845b"),
		"mongolian \u1820\u180b":       len("mongolian \u1820"),
		"braille\u2800blank":           len("braille"),
		"hangul\u3164filler":           len("hangul"),
		"halfwidth\uffa0filler":        len("halfwidth"),
		"zero\u200bwidth":              len("zero"),
		"tag\U000e0041":                len("tag"),
		// A selector after an ordinary letter or a digit that starts no
		// keycap is a hidden bit: F\ufe0eo\ufe0f… alternates them.
		"F\ufe0eo\ufe0frmats": len("F"),
		"a\ufe0f":             len("a"),
		"digit 1\ufe0f alone": len("digit 1"),
		"double \u203c\ufe0f": -1, // a punctuation mark with an emoji form
		"info \u2139\ufe0f":   -1,
	} {
		if got, _ := HiddenAt(in); got != want {
			t.Errorf("HiddenAt(%q) = %d, want %d", in, got, want)
		}
	}
}
