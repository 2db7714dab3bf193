package archive

import (
	"crypto/rand"
	"strings"
	"testing"
)

// TestBombsStopWithinBudget counts the bytes the decompressors actually
// handed out (validator.produced) while rejecting bombs: never more than
// the content budget plus one byte, plus the metadata the tar parser read.
func TestBombsStopWithinBudget(t *testing.T) {
	zeros := strings.Repeat("\x00", 32<<20)
	noise := make([]byte, 200<<10)
	if _, err := rand.Read(noise); err != nil {
		t.Fatal(err)
	}
	skillRec := zipRec{name: "SKILL.md", body: skill, method: methodDeflate}
	cases := []struct {
		name    string
		format  Format
		data    func(t testing.TB) []byte
		code    string
		minimum int64 // the validator must have read at least this much (-1: the content cap)
	}{
		{"gzip bomb, 1000:1", FormatTarGz, func(t testing.TB) []byte {
			return gz(t, rawTar([]tarRec{{name: "SKILL.md", body: skill}, {name: "bomb", body: zeros}}, false, nil))
		}, CodeRatioExceeded, -1},
		{"gzip bomb beside noise, under the ratio", FormatTarGz, func(t testing.TB) []byte {
			return gz(t, rawTar([]tarRec{{name: "SKILL.md", body: skill}, {name: "noise", body: string(noise)}, {name: "bomb", body: zeros}}, false, nil))
		}, CodeExpandedTooLarge, -1},
		{"zip deflate bomb", FormatZip, func(t testing.TB) []byte {
			return rawZip(t, []zipRec{skillRec, {name: "bomb", body: zeros, method: methodDeflate}}, zipOpt{})
		}, CodeRatioExceeded, -1},
		{"zip bomb declaring a small size", FormatZip, func(t testing.TB) []byte {
			return rawZip(t, []zipRec{skillRec, {name: "bomb", body: zeros, method: methodDeflate, declared: ptr(uint32(100))}}, zipOpt{})
		}, CodeSizeMismatch, 101},
		{"zip full overlap inflates nothing", FormatZip, func(t testing.TB) []byte {
			k := uint32(len(localRecord(t, skillRec)))
			recs := []zipRec{skillRec, {name: "k0", body: zeros, method: methodDeflate}}
			for _, n := range []string{"k1", "k2"} {
				recs = append(recs, zipRec{name: n, body: zeros, method: methodDeflate, noLocal: true, offset: ptr(k)})
			}
			return rawZip(t, recs, zipOpt{})
		}, CodeOverlapping, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := c.data(t)
			v, err := newValidator(data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = v.run(c.format)
			if e, ok := AsError(err); !ok || e.Code != c.code {
				t.Fatalf("error %v, want code %s", err, c.code)
			}
			padding := int64(len(v.entries)) * (tarBlock - 1)
			limit := v.contentCap + 1 + v.meta + padding
			if v.produced > limit {
				t.Fatalf("decompressed %d bytes from a %d-byte archive, budget %d", v.produced, len(data), limit)
			}
			minimum := c.minimum
			if minimum < 0 {
				minimum = v.contentCap
			}
			if v.produced < minimum {
				t.Fatalf("decompressed only %d bytes, want at least %d: something else stopped the bomb", v.produced, minimum)
			}
			t.Logf("%d-byte archive, content cap %d: decompressed %d bytes before %s", len(data), v.contentCap, v.produced, c.code)
		})
	}
}

func TestAllocationsDoNotGrowWithContent(t *testing.T) {
	// The same 100 entries with 1 KiB or 64 KiB each: every file's content
	// is kept in one buffer sized up front, so 64 times the content must
	// not change the allocation count beyond collection noise (sync.Pool
	// refills after the extra garbage collections); a buffer that grows as
	// chunks arrive costs about one allocation per file more.
	build := func(size int, format Format) []byte {
		files := []file{{name: "SKILL.md", body: skill}}
		for i := range 100 {
			files = append(files, file{name: "f" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26)), body: strings.Repeat("content ", size/8)})
		}
		if format == FormatZip {
			return goZip(t, files...)
		}
		return goTgz(t, files...)
	}
	for _, format := range []Format{FormatZip, FormatTarGz} {
		small, large := build(1<<10, format), build(64<<10, format)
		allocs := func(data []byte) float64 {
			return testing.AllocsPerRun(5, func() {
				if _, err := ValidateFormat(data, format, Limits{MaxRatio: 1000}); err != nil {
					t.Fatal(err)
				}
			})
		}
		a, b := allocs(small), allocs(large)
		if b > a+a/50 {
			t.Errorf("%s: %v allocations with 1 KiB files, %v with 64 KiB files: content allocates", format, a, b)
		}
		t.Logf("%s: %v allocations for 101 entries (1 KiB files), %v (64 KiB files)", format, a, b)
	}
}
