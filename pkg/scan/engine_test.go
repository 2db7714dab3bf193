package scan

import "testing"

func TestCompareEngines(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b string
		want int
	}{
		{"same", "skilldrop-scan/2026.12.1", "skilldrop-scan/2026.12.1", 0},
		{"patch older", "skilldrop-scan/2026.12.1", "skilldrop-scan/2026.12.2", -1},
		{"numeric, not lexical", "skilldrop-scan/2026.12.10", "skilldrop-scan/2026.12.9", 1},
		{"month numeric", "skilldrop-scan/2026.9.1", "skilldrop-scan/2026.12.1", -1},
		{"missing part is zero", "skilldrop-scan/2026.12", "skilldrop-scan/2026.12.0", 0},
		{"longer is newer", "skilldrop-scan/2026.12", "skilldrop-scan/2026.12.1", -1},
		{"leading zeros", "skilldrop-scan/2026.012.1", "skilldrop-scan/2026.12.1", 0},
		{"huge part", "skilldrop-scan/2026.99999999999999999999999", "skilldrop-scan/2026.1", 1},
		{"absent is older", "", "skilldrop-scan/0", -1},
		{"unparseable is older", "skilldrop-scan/next", "skilldrop-scan/0", -1},
		{"other scanner is older", "otherscan/2027.1", "skilldrop-scan/2026.1", -1},
		{"empty part", "skilldrop-scan/2026..1", "skilldrop-scan/1", -1},
		{"parseable is newer", "skilldrop-scan/1", "skilldrop-scan/x", 1},
		{"both unparseable", "x", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CompareEngines(tc.a, tc.b); got != tc.want {
				t.Errorf("CompareEngines(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
			}
			if got := CompareEngines(tc.b, tc.a); got != -tc.want {
				t.Errorf("CompareEngines(%q, %q) = %d, want %d", tc.b, tc.a, got, -tc.want)
			}
		})
	}
}
