package scan_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/skilldrop/skilldrop/internal/skilltest"
	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// BenchmarkScanText scans 10 MiB of benign skill text (tenMiB: prose,
// shell and Python with the words the rules look for); its MB/s is the
// throughput on one core.
func BenchmarkScanText(b *testing.B) {
	files := []archive.File{{Path: "big.md", Data: tenMiB()}}
	scan.Default() // the pack is compiled once per process, not per scan
	b.SetBytes(int64(len(files[0].Data)))
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		scan.Files(files)
	}
	reportCPU(b, cpu)
}

// reportCPU reports the processor time per operation since cpu, as
// cpu-ns/op: on a shared machine, whose neighbours stretch the wall clock
// but not this, the figure to take ratios of.
func reportCPU(b *testing.B, cpu time.Duration) {
	if d := cpuTime(b) - cpu; d > 0 {
		b.ReportMetric(float64(d.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// benchArchive is a skill of 200 files of about 40 KiB of that text: the
// shape of a large real skill, about 8 MiB of content.
func benchArchive(b *testing.B, tgz bool) ([]byte, string) {
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{"SKILL.md": skilltest.SkillMD("bench", "1", "A large skill.")}
	for i := range 200 {
		var sb strings.Builder
		for sb.Len() < 40<<10 {
			sb.WriteString(benignLines[rng.IntN(len(benignLines))])
			sb.WriteByte('\n')
		}
		files[fmt.Sprintf("docs/part%02d/file%03d.md", i/20, i)] = sb.String()
	}
	if tgz {
		return gzipped(b, files), "bench.tar.gz"
	}
	return zipOf(b, files), "bench.zip"
}

// gzipped is a .tar.gz of files, compressed (skilltest's is stored).
func gzipped(b *testing.B, files map[string]string) []byte {
	return recompress(b, skilltest.TarGz(b, files))
}

// BenchmarkScanOverhead compares, in the same run, validating an archive
// (the baseline: the indexer's work today) with validating and scanning
// it: validate+scan cpu-ns/op (or ns/op, on a quiet machine) over
// validate's is what scanning adds.
func BenchmarkScanOverhead(b *testing.B) {
	for _, tgz := range []bool{false, true} {
		data, name := benchArchive(b, tgz)
		res, err := archive.Validate(data, name, archive.Limits{})
		if err != nil {
			b.Fatal(err)
		}
		scan.Default()
		for _, withScan := range []bool{false, true} {
			label := "validate"
			if withScan {
				label = "validate+scan"
			}
			b.Run(name+"/"+label, func(b *testing.B) {
				b.SetBytes(res.ExpandedBytes)
				cpu := cpuTime(b)
				for b.Loop() {
					r, err := archive.Validate(data, name, archive.Limits{})
					if err != nil {
						b.Fatal(err)
					}
					if withScan {
						scan.Files(r.Files)
					}
				}
				reportCPU(b, cpu)
			})
		}
	}
}
