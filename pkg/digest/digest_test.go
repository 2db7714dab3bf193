package digest

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

const emptySHA = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func TestParse(t *testing.T) {
	tests := []struct {
		name, in string
		wantErr  string
	}{
		{"valid", emptySHA, ""},
		{"upper case hex", strings.ToUpper(emptySHA[:7]) + emptySHA[7:], "unsupported algorithm"},
		{"upper case digit", "sha256:E3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "upper-case"},
		{"short", emptySHA[:len(emptySHA)-1], "63 characters"},
		{"long", emptySHA + "0", "65 characters"},
		{"no algorithm", emptySHA[7:], "want sha256:"},
		{"sha512", "sha512:" + emptySHA[7:], "unsupported algorithm"},
		{"empty", "", "want sha256:"},
		{"non hex", "sha256:g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "not a hex digit"},
		{"space", "sha256: 3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "not a hex digit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Parse(tt.in)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse(%q) = %v", tt.in, err)
				}
				if d.String() != tt.in {
					t.Fatalf("round trip: %q != %q", d.String(), tt.in)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse(%q) error = %v, want ErrSyntax containing %q", tt.in, err, tt.wantErr)
			}
		})
	}
}

func TestOfAndVerify(t *testing.T) {
	if got := Of(nil).String(); got != emptySHA {
		t.Fatalf("Of(nil) = %s", got)
	}
	d := Of([]byte("hello"))
	if !d.Verify([]byte("hello")) || d.Verify([]byte("hellO")) {
		t.Fatal("Verify disagrees with content")
	}
	if d.Equal(Digest{}) || (Digest{}).Equal(Digest{}) {
		t.Fatal("zero digests must never compare equal")
	}
	if d.Short() != d.Hex()[:12] {
		t.Fatal("Short is not a prefix of Hex")
	}
}

func TestReader(t *testing.T) {
	data := bytes.Repeat([]byte("skilldrop"), 10000)
	r := NewReader(bytes.NewReader(data))
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	if !r.Digest().Equal(Of(data)) || r.N() != int64(len(data)) {
		t.Fatalf("reader digest %s n=%d", r.Digest(), r.N())
	}
}

func TestText(t *testing.T) {
	var d Digest
	if err := d.UnmarshalText([]byte(emptySHA)); err != nil || d.String() != emptySHA {
		t.Fatalf("UnmarshalText: %v %s", err, d)
	}
	if err := d.UnmarshalText([]byte("md5:abc")); err == nil {
		t.Fatal("UnmarshalText accepted md5")
	}
	b, _ := MustParse(emptySHA).MarshalText()
	if string(b) != emptySHA {
		t.Fatalf("MarshalText = %s", b)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{emptySHA, "sha256:", "sha512:00", "SHA256:" + emptySHA[7:], emptySHA + "x", ":", "sha256:" + strings.Repeat("f", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error does not wrap ErrSyntax: %v", err)
			}
			return
		}
		// Anything accepted is canonical: it formats back to exactly the input.
		if d.String() != s {
			t.Fatalf("accepted %q but formats as %q", s, d.String())
		}
	})
}
