package jcs

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

// TestRFC8785Example is the example of RFC 8785 section 3.2.2.
func TestRFC8785Example(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	got, err := Canonicalize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("Canonicalize =\n%s\nwant\n%s", got, want)
	}
}

// TestSortsByUTF16 is the sorting example of RFC 8785 section 3.2.3: an
// emoji (a surrogate pair) sorts before U+FB33 in UTF-16, after it in code points.
func TestSortsByUTF16(t *testing.T) {
	in := `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",` +
		`"\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`
	want := "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}"
	got, err := Canonicalize([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("Canonicalize =\n%q\nwant\n%q", got, want)
	}
}

// TestNumbers are values from RFC 8785 appendix B (IEEE 754 bits, then
// the ECMAScript spelling).
func TestNumbers(t *testing.T) {
	for _, tc := range []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	} {
		if got := FormatDouble(math.Float64frombits(tc.bits)); got != tc.want {
			t.Errorf("FormatDouble(%#x) = %s, want %s", tc.bits, got, tc.want)
		}
	}
}

func TestRefusals(t *testing.T) {
	for _, in := range []string{
		`{"a":1,"a":2}`,
		`{"a":1,"\u0061":2}`,
		`{"x":{"a":1,"a":2}}`,
		`[{"y":[{"a":1,"a":2}]}]`,
		`"\ud800"`,
		`"\uDFFF"`,
		`["a\udc00b"]`,
		`{"\ud83d":1}`,
		`{"a":"\ud83d\u0041"}`,
		`{"a":"\ud83dx"}`,
		`{"a":"\ud83d\ud83d"}`,
		`{"a":"\ud83d"}`,
		"\"\xed\xa0\x80\"",
		"\"\xff\"",
		`[1e400]`,
		`{"a":1} x`,
		`{"a":1}{"b":2}`,
		`{"a":}`,
		``,
	} {
		if _, err := Canonicalize([]byte(in)); !errors.Is(err, ErrInput) {
			t.Errorf("Canonicalize(%q) = %v, want ErrInput", in, err)
		}
	}
}

// TestSurrogatePairs: a pair of escapes is one character, and text that
// only looks like an escape is text.
func TestSurrogatePairs(t *testing.T) {
	for in, want := range map[string]string{
		`"\ud83d\ude00"`:  "\"\U0001F600\"",
		`"\uD83D\uDE00x"`: "\"\U0001F600x\"",
		`"\\ud800"`:       `"\\ud800"`,
		`"\\\u0041"`:      `"\\A"`,
		`{"\"\ud800":1}`:  "",
	} {
		got, err := Canonicalize([]byte(in))
		if want == "" {
			if !errors.Is(err, ErrInput) {
				t.Errorf("Canonicalize(%s) = %q, %v: want ErrInput", in, got, err)
			}
			continue
		}
		if err != nil || string(got) != want {
			t.Errorf("Canonicalize(%s) = %q, %v: want %q", in, got, err, want)
		}
	}
}

func TestWithout(t *testing.T) {
	rest, sig, err := Without([]byte(`{"b":[1.0],"signature":"x\u0079","a":{"d":1,"c":2}}`), "signature")
	if err != nil || string(rest) != `{"a":{"c":2,"d":1},"b":[1]}` || string(sig) != `"xy"` {
		t.Errorf("Without = %s, %s, %v", rest, sig, err)
	}
	if rest, sig, err := Without([]byte(`{"a":1}`), "signature"); err != nil || string(rest) != `{"a":1}` || sig != nil {
		t.Errorf("Without of a document without the member = %s, %s, %v", rest, sig, err)
	}
	for _, in := range []string{
		`{"signature":"a","signature":"b"}`,
		`{"a":1,"signature":"s","a":2}`,
		`{"a":{"b":1,"b":2},"signature":"s"}`,
		`{"a":"\udead","signature":"s"}`,
		`["signature"]`,
		`"signature"`,
		`{"signature":"s"} {}`,
	} {
		if _, _, err := Without([]byte(in), "signature"); !errors.Is(err, ErrInput) {
			t.Errorf("Without(%s) = %v, want ErrInput", in, err)
		}
	}
}

func TestMarshalIsStable(t *testing.T) {
	type doc struct {
		B string         `json:"b"`
		A map[string]any `json:"a"`
	}
	got, err := Marshal(doc{B: "<&>\u2028", A: map[string]any{"z": 1.0, "y": []any{json.Number("10.0"), nil}}})
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json escapes <, & and U+2028; JCS writes them as they are.
	if want := "{\"a\":{\"y\":[10,null],\"z\":1},\"b\":\"<&>\u2028\"}"; string(got) != want {
		t.Errorf("Marshal = %q, want %q", got, want)
	}
}
