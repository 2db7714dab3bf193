package scan_test

import (
	"slices"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/scan"
)

// FuzzScan: any bytes scan without a panic, within the report's bounds,
// every finding naming a rule of the pack and a line of the file, and the
// same bytes always give the same report.
func FuzzScan(f *testing.F) {
	for _, s := range corpus(f) {
		if s.binary != nil {
			f.Add(s.binary)
		} else {
			f.Add([]byte(s.text))
		}
	}
	for _, l := range benignLines {
		f.Add([]byte(l))
	}
	pack := scan.Default()
	f.Fuzz(func(t *testing.T, data []byte) {
		files := []archive.File{{Path: "f", Data: data}}
		r := scan.Files(files)
		if len(r.Findings) > scan.MaxFindings {
			t.Fatalf("%d findings", len(r.Findings))
		}
		lines := 1
		for _, b := range data {
			if b == '\n' {
				lines++
			}
		}
		for _, fd := range r.Findings {
			if pack.Rule(fd.Rule) == nil || fd.File != "f" || fd.Line < 0 || fd.Line > lines {
				t.Fatalf("finding %+v of a %d-line file", fd, lines)
			}
		}
		if again := scan.Files(files); !slices.Equal(again.Findings, r.Findings) {
			t.Fatalf("two scans differ:\n%v\n%v", r.Findings, again.Findings)
		}
	})
}
