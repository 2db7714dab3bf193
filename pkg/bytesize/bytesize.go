// Package bytesize writes byte counts for people, in binary units as the
// caps are set ("4 MiB", "6.0 MiB", "512 bytes"), for rejection messages
// that an operator reads and acts on.
package bytesize

import (
	"fmt"
	"strconv"
)

var units = []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}

// Format writes n bytes in the largest binary unit it reaches: a whole
// number when n is an exact multiple of it ("4 MiB"), else one decimal
// ("6.0 MiB", which is not exactly 6 MiB); below 1 KiB in bytes.
func Format(n int64) string {
	if n < 1024 && n > -1024 {
		if n == 1 {
			return "1 byte"
		}
		return strconv.FormatInt(n, 10) + " bytes"
	}
	abs := uint64(n)
	sign := ""
	if n < 0 {
		abs, sign = uint64(-n), "-"
	}
	i, unit := 0, uint64(1024)
	for i+1 < len(units) && abs >= unit*1024 {
		i, unit = i+1, unit*1024
	}
	if abs%unit == 0 {
		return fmt.Sprintf("%s%d %s", sign, abs/unit, units[i])
	}
	v := float64(abs) / float64(unit)
	if v >= 1023.95 && i+1 < len(units) { // would print as 1024.0 of this unit
		v, i = v/1024, i+1
	}
	return fmt.Sprintf("%s%.1f %s", sign, v, units[i])
}

// Exceeds writes "size > limit" for a size over a limit ("6.0 MiB > 4 MiB"),
// in bytes when the rounded sizes would read alike ("4.0 MiB > 4 MiB" reads
// as no excess at all).
func Exceeds(size, limit int64) string {
	s, l := Format(size), Format(limit)
	if s == l || s == trimPoint(l) || trimPoint(s) == l {
		s, l = strconv.FormatInt(size, 10)+" bytes", strconv.FormatInt(limit, 10)+" bytes"
	}
	return s + " > " + l
}

// trimPoint turns "4 MiB" into "4.0 MiB" and back, to compare how sizes read.
func trimPoint(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '.':
			if i+2 < len(s) && s[i+1] == '0' && s[i+2] == ' ' {
				return s[:i] + s[i+2:]
			}
			return s
		case ' ':
			return s[:i] + ".0" + s[i:]
		}
	}
	return s
}
