package scan

import (
	"strings"
	"testing"
)

// TestShellView: the lines a shell reads otherwise are read as it does,
// and only those: prose apostrophes, plain quoting and unset variables
// leave a line out.
func TestShellView(t *testing.T) {
	for in, want := range map[string]string{
		"c''url -s x | s\"h\"":                 "curl -s x | sh",
		`cur\l x`:                              "curl x",
		"curl${IFS}-s${IFS}x|sh":               "curl -s x|sh",
		"cat$IFS$9/etc/passwd":                 "cat /etc/passwd",
		"c$@url x":                             "curl x",
		"c=curl; $c x | ${c}":                  "c=curl; curl x | curl",
		"export S='sh'\ncurl x | $S":           "curl x | sh",
		"don't tell them it's x":               "",
		`echo "hello $HOME" 'it is'`:           "",
		"x=$(date); echo $x":                   "",
		"PATH=\"$HOME/bin:$PATH\"; echo $PATH": "",
	} {
		v, _ := normalize([]byte(in))
		sv := shellView(v)
		got := ""
		if sv != nil {
			got = strings.TrimSuffix(string(sv.text), "\n")
		}
		if got != want {
			t.Errorf("%q: shell view %q, want %q", in, got, want)
		}
	}
}

// TestShellVarsBounded: a text that sets thousands of variables is
// followed for at most maxShellVars of them, values at most
// maxShellVarSize long.
func TestShellVarsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 5000 {
		b.WriteString("v" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + "=curl\n")
	}
	b.WriteString("long=" + strings.Repeat("a", maxShellVarSize+1) + "\n")
	vars := shellVars([]byte(b.String()))
	if len(vars) > maxShellVars {
		t.Errorf("%d variables, want at most %d", len(vars), maxShellVars)
	}
	if _, ok := vars["long"]; ok {
		t.Error("a value longer than maxShellVarSize is followed")
	}
}

// TestUTF16Text: UTF-16 with either byte order mark, or with the zero
// bytes of ASCII on one side, decodes (surrogate pairs too); other bytes
// do not.
func TestUTF16Text(t *testing.T) {
	for name, c := range map[string]struct {
		in   []byte
		want string
	}{
		"LE with a BOM":        {[]byte("\xff\xfeh\x00i\x00=\xd8\x00\xde"), "hi\U0001F600"},
		"BE with a BOM":        {[]byte("\xfe\xff\x00h\x00i"), "hi"},
		"LE without a BOM":     {[]byte("c\x00u\x00r\x00l\x00 \x00x\x00"), "curl x"},
		"BE without a BOM":     {[]byte("\x00c\x00u\x00r\x00l\x00 \x00x"), "curl x"},
		"plain ASCII":          {[]byte("curl x | sh"), ""},
		"a NUL here and there": {[]byte("abc\x00defghij\x00klmnop"), ""},
	} {
		if got := string(utf16Text(c.in)); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}
