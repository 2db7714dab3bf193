package scan_test

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
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
func BenchmarkScanText(b *testing.B) { benchScan(b, []archive.File{{Path: "big.md", Data: tenMiB()}}) }

// BenchmarkScanRepoText scans real technical text: this repository's own
// documentation, scripts and configuration (repoText), about 330 KiB, in
// copies to 10 MiB, one file for each of its files. It is denser in what
// the rules look for than most skills are: the README shows the attacks.
func BenchmarkScanRepoText(b *testing.B) { benchScan(b, repoText(b, 10<<20)) }

// benchScan measures scanning files, in bytes and processor time.
func benchScan(b *testing.B, files []archive.File) {
	var n int64
	for _, f := range files {
		n += int64(len(f.Data))
	}
	scan.Default() // the pack is compiled once per process, not per scan
	b.SetBytes(n)
	b.ReportAllocs()
	cpu := cpuTime(b)
	for b.Loop() {
		scan.Files(files)
	}
	reportCPU(b, cpu)
}

// BenchmarkScanModuleDocs scans third-party technical prose: the
// markdown of the Go modules this one builds with (moduleDocs: their
// READMEs, changelogs and guides, about 5 MiB, pinned by go.sum), in
// copies to 10 MiB.
func BenchmarkScanModuleDocs(b *testing.B) { benchScan(b, copiesOf(moduleDocs(b), 10<<20)) }

// moduleDocs is the markdown (over 1 KiB) of the modules of the build
// list but this one, from the module cache (go list -m).
func moduleDocs(b *testing.B) []archive.File {
	out, err := exec.Command("go", "list", "-m", "-f", "{{if not .Main}}{{.Dir}}{{end}}", "all").Output()
	if err != nil {
		b.Fatalf("go list -m all: %v", err)
	}
	var files []archive.File
	for _, dir := range strings.Fields(string(out)) {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Ext(path) != ".md" {
				return err
			}
			data, err := os.ReadFile(path)
			if err == nil && len(data) > 1<<10 {
				files = append(files, archive.File{Path: filepath.ToSlash(filepath.Join(filepath.Base(dir), path[len(dir)+1:])), Data: data})
			}
			return err
		})
		if err != nil {
			b.Fatalf("reading %s: %v", dir, err)
		}
	}
	if len(files) < 20 {
		b.Skipf("the module cache holds %d markdown files of the build list: run go mod download first", len(files))
	}
	return files
}

// repoText is the repository's text files (markdown, shell, Python,
// JavaScript, YAML, JSON) but pkg/scan's own, whose tests hold attacks,
// and what is built or installed, copied under new paths until they hold
// size bytes.
func repoText(b *testing.B, size int) []archive.File {
	var files []archive.File
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "build" || name == "bin" ||
				path == filepath.Join(root, "pkg", "scan")) {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(name) {
		case ".md", ".sh", ".py", ".js", ".mjs", ".yaml", ".yml", ".json", ".txt":
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			files = append(files, archive.File{Path: filepath.ToSlash(path[len(root)+1:]), Data: data})
		}
		return nil
	})
	if err != nil || len(files) < 20 {
		b.Fatalf("reading the repository's text: %d files, %v", len(files), err)
	}
	return copiesOf(files, size)
}

// copiesOf is files copied under new paths until they hold size bytes.
func copiesOf(files []archive.File, size int) []archive.File {
	var out []archive.File
	for n, i := 0, 0; n < size; i++ {
		f := files[i%len(files)]
		out = append(out, archive.File{Path: fmt.Sprintf("copy%02d/%s", i/len(files), f.Path), Data: f.Data})
		n += len(f.Data)
	}
	return out
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
