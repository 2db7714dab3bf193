package skillsconfig

import (
	"fmt"
	"reflect"
	"strings"
)

// levels are the document's mappings with closed key sets, by the raw type
// that decodes them, with the keys read from its yaml tags: the suggestions
// cannot drift from what Parse accepts.
var levels = map[string]struct {
	where string
	keys  []string
}{
	"rawConfig":  {"the top level", yamlKeys(rawConfig{})},
	"rawListing": {"a listing", yamlKeys(rawListing{})},
	"rawEntry":   {"an entry", yamlKeys(rawEntry{})},
	"rawScan":    {"scan", yamlKeys(rawScan{})},
	"rawAllow":   {"an allow", yamlKeys(rawAllow{})},
	"rawRevoke":  {"a revocation", yamlKeys(rawRevoke{})},
}

func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// unknownKey writes the message for a key the decoder did not know at the
// level decoded by typ ("rawEntry"): with the known key it most likely
// misspells ("did you mean"), or the level it belongs to when it is a key
// of another one.
func unknownKey(line, key, typ string) string {
	msg := fmt.Sprintf("line %s: unknown key %q", line, clip(key))
	lv, ok := levels[typ]
	if !ok {
		return msg
	}
	msg += " in " + lv.where
	best := closest(key, lv.keys)
	if syn, ok := synonyms[strings.ToLower(key)]; ok && best == "" && contains(lv.keys, syn) {
		best = syn
	}
	if best != "" {
		return msg + fmt.Sprintf(" (did you mean %q?)", best)
	}
	for _, other := range []string{"rawConfig", "rawListing", "rawEntry"} {
		if o := levels[other]; other != typ && contains(o.keys, key) {
			return msg + fmt.Sprintf(" (%q is a key of %s)", key, o.where)
		}
	}
	return msg
}

// synonyms are the words for a key that are no slip of the keyboard but
// another name for it, as other tools spell it.
var synonyms = map[string]string{
	"revocation": "revoke", "revocations": "revoke", "revoked": "revoke", "revokes": "revoke",
	"allowlist": "allow", "allow_list": "allow", "allowed": "allow", "allows": "allow", "whitelist": "allow", "exceptions": "allow",
	"threshold": "block", "block_on": "block", "severity": "block",
}

// closest returns the key nearest to s when it is near enough to be a slip
// of the keyboard: an edit distance (insertions, deletions, substitutions,
// swaps of neighbours; case ignored) of at most 2, and less than half of s.
func closest(s string, keys []string) string {
	best, bestD := "", 3
	for _, k := range keys {
		d := distance(strings.ToLower(s), k)
		if d < bestD && 2*d < len(s) {
			best, bestD = k, d
		}
	}
	return best
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// distance is the optimal string alignment distance between a and b, in
// bytes (keys and names are ASCII; anything else is far from all of them
// anyway), kept in three rows.
func distance(a, b string) int {
	if len(a) > 64 {
		return len(a) // no key or name is that long
	}
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
