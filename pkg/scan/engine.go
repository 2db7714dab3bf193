package scan

import "strings"

// CompareEngines orders two engine versions by their rule packs' dotted
// numeric versions ("skilldrop-scan/2026.12.1" before
// "skilldrop-scan/2026.12.10"): -1 when a is older than b, 0 when they are
// the same, +1 when a is newer. An engine that does not parse (none,
// another scanner, a version that is not dotted numbers) is older than
// any that does, so that what it judged is judged again; two that do not
// parse are the same. Missing trailing parts count as 0 (2026.12 is
// 2026.12.0).
func CompareEngines(a, b string) int {
	x, okA := engineParts(a)
	y, okB := engineParts(b)
	switch {
	case !okA && !okB:
		return 0
	case !okA:
		return -1
	case !okB:
		return 1
	}
	for i := range max(len(x), len(y)) {
		p, q := "0", "0"
		if i < len(x) {
			p = x[i]
		}
		if i < len(y) {
			q = y[i]
		}
		if c := compareNumeric(p, q); c != 0 {
			return c
		}
	}
	return 0
}

// engineParts splits an engine's pack version into its numeric parts,
// leading zeros dropped; ok is false when it is not EnginePrefix and
// dotted decimal numbers.
func engineParts(engine string) (parts []string, ok bool) {
	v, found := strings.CutPrefix(engine, EnginePrefix)
	if !found || v == "" {
		return nil, false
	}
	for p := range strings.SplitSeq(v, ".") {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return nil, false
		}
		if p = strings.TrimLeft(p, "0"); p == "" {
			p = "0"
		}
		parts = append(parts, p)
	}
	return parts, true
}

// compareNumeric compares two decimal numbers without leading zeros, of
// any length (no overflow).
func compareNumeric(p, q string) int {
	if len(p) != len(q) {
		if len(p) < len(q) {
			return -1
		}
		return 1
	}
	return strings.Compare(p, q)
}
