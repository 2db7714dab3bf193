package archive

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchArchives are a 1000-entry zip and tar.gz of about 8 MiB of text-like
// content (999 files of ~8 KiB and SKILL.md) that compresses about 3×: an
// acceptance under the default caps, so the benchmarks measure the whole
// validation path.
var (
	benchOnce          sync.Once
	benchZip, benchTgz []byte
)

func benchArchives(tb testing.TB) (zipData, tgzData []byte) {
	benchOnce.Do(func() { benchZip, benchTgz = buildBenchArchives(tb) })
	return benchZip, benchTgz
}

func buildBenchArchives(tb testing.TB) (zipData, tgzData []byte) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := make([]string, 300)
	for i := range words {
		w := make([]byte, 2+rng.IntN(9))
		for j := range w {
			w[j] = byte('a' + rng.IntN(26))
		}
		words[i] = string(w)
	}
	files := []file{{name: "SKILL.md", body: skillDoc("bench")}}
	for i := range 999 {
		var sb strings.Builder
		for sb.Len() < 8400 {
			sb.WriteString(words[rng.IntN(len(words))])
			sb.WriteByte(" \n"[rng.IntN(12)/11])
		}
		files = append(files, file{name: fmt.Sprintf("docs/part%02d/file%04d.md", i/100, i), body: sb.String()})
	}
	return goZip(tb, files...), goTgz(tb, files...)
}

func benchAccepted(b *testing.B, data []byte, name string) *Result {
	b.Helper()
	res, err := Validate(data, name, Limits{})
	if err != nil {
		b.Fatalf("the benchmark archive is rejected: %v", err)
	}
	if len(res.Entries) != 1000 {
		b.Fatalf("%d entries, want 1000", len(res.Entries))
	}
	return res
}

func BenchmarkValidateZip(b *testing.B) {
	data, _ := benchArchives(b)
	res := benchAccepted(b, data, "bench.zip")
	b.SetBytes(res.ExpandedBytes)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Validate(data, "bench.zip", Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "archive-bytes")
}

// zipBaseline only inflates every entry and hashes the archive: the floor
// any validator of these bytes pays. Entry offsets are found once, with
// archive/zip, outside the timed loops.
type zipBaseline struct {
	data   []byte
	chunks [][]byte
	total  int64
	buf    []byte
	br     bytes.Reader
	fr     io.ReadCloser
}

func newZipBaseline(b *testing.B, data []byte) *zipBaseline {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		b.Fatal(err)
	}
	z := &zipBaseline{data: data, buf: make([]byte, copyBufSize)}
	for _, f := range zr.File {
		off, err := f.DataOffset()
		if err != nil {
			b.Fatal(err)
		}
		z.chunks = append(z.chunks, data[off:off+int64(f.CompressedSize64)])
		z.total += int64(f.UncompressedSize64)
	}
	z.fr = flate.NewReader(&z.br)
	return z
}

func (z *zipBaseline) run(b *testing.B) {
	sum := sha256.Sum256(z.data)
	_ = sum
	for _, c := range z.chunks {
		z.br.Reset(c)
		if err := z.fr.(flate.Resetter).Reset(&z.br, nil); err != nil {
			b.Fatal(err)
		}
		if _, err := io.CopyBuffer(io.Discard, z.fr, z.buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaselineZip(b *testing.B) {
	data, _ := benchArchives(b)
	z := newZipBaseline(b, data)
	b.SetBytes(z.total)
	b.ReportAllocs()
	for b.Loop() {
		z.run(b)
	}
}

func BenchmarkValidateTarGz(b *testing.B) {
	_, data := benchArchives(b)
	res := benchAccepted(b, data, "bench.tar.gz")
	b.SetBytes(res.ExpandedBytes)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Validate(data, "bench.tar.gz", Limits{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data)), "archive-bytes")
}

// tgzBaseline only gunzips the stream and hashes the archive.
func tgzBaseline(b *testing.B, data, buf []byte) {
	sum := sha256.Sum256(data)
	_ = sum
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyBuffer(io.Discard, zr, buf); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkBaselineTarGz(b *testing.B) {
	_, data := benchArchives(b)
	res := benchAccepted(b, data, "bench.tar.gz")
	b.SetBytes(res.ExpandedBytes)
	b.ReportAllocs()
	buf := make([]byte, copyBufSize)
	for b.Loop() {
		tgzBaseline(b, data, buf)
	}
}

// BenchmarkRatio runs validator and baseline alternately on the same
// archive and reports validator time ÷ baseline time: on a shared machine
// the load changes between two separate benchmarks far more than between
// two halves of one iteration.
func BenchmarkRatio(b *testing.B) {
	zipData, tgzData := benchArchives(b)
	b.Run("zip", func(b *testing.B) {
		z := newZipBaseline(b, zipData)
		ratioLoop(b, func() {
			if _, err := Validate(zipData, "bench.zip", Limits{}); err != nil {
				b.Fatal(err)
			}
		}, func() { z.run(b) })
	})
	b.Run("tar.gz", func(b *testing.B) {
		buf := make([]byte, copyBufSize)
		ratioLoop(b, func() {
			if _, err := Validate(tgzData, "bench.tar.gz", Limits{}); err != nil {
				b.Fatal(err)
			}
		}, func() { tgzBaseline(b, tgzData, buf) })
	})
}

func ratioLoop(b *testing.B, validate, baseline func()) {
	var tv, tb time.Duration
	for b.Loop() {
		t0 := time.Now()
		validate()
		t1 := time.Now()
		baseline()
		tv, tb = tv+t1.Sub(t0), tb+time.Since(t1)
	}
	b.ReportMetric(float64(tv)/float64(tb), "validator/baseline")
}
