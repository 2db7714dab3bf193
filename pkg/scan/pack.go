package scan

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// rulesYAML is the rule pack this build scans with.
//
//go:embed rules.yaml
var rulesYAML []byte

// EnginePrefix starts every engine version: the scanner's name, then the
// rule pack's version ("skilldrop-scan/2026.12.1").
const EnginePrefix = "skilldrop-scan/"

// Rule is one rule of a pack, as the pack's YAML gives it.
type Rule struct {
	ID       string   `yaml:"id"`
	Category Category `yaml:"category"`
	// Severity is zero for a signal: a rule that is only part of combinations.
	Severity  Severity `yaml:"-"`
	Message   string   `yaml:"message"`
	Keywords  []string `yaml:"keywords"`
	Pattern   string   `yaml:"pattern"`
	Case      string   `yaml:"case"`
	Scope     string   `yaml:"scope"`
	Requires  []string `yaml:"requires"`
	Validator string   `yaml:"validator"`
	Detector  string   `yaml:"detector"`
	All       []string `yaml:"all"`

	severity string
	valid    func(text []byte, start, end int) bool
	index    int
	requires []int // indexes of the pack's needles
	// prose is set for the rules of words addressed to the agent, which a
	// paragraph may wrap onto its next line (scanner.patterns).
	prose bool
}

// escapes are a pattern's escapes, whose letters say nothing of its case.
var escapes = regexp.MustCompile(`\\[a-zA-Z]`)

// flagGroup is a group that sets flags for the rest of its group ("(?i)").
var flagGroup = regexp.MustCompile(`\(\?[a-zA-Z-]+\)`)

// matcher is what one keyword of a rule runs where it is found: the
// alternatives of the rule's pattern that can start with the keyword, so
// that a frequent keyword never pays for the others.
type matcher struct {
	rule *Rule
	re   *regexp.Regexp
	// needs are what a window must hold for re to match in it (needsOf),
	// as indexes of the pack's needles; none when nothing is known.
	needs []int
}

// matchers splits r's pattern into its top-level alternatives and gives
// each keyword the ones that may start with it (all of those whose start
// is not a literal).
func (p *Pack) matchers(r *Rule) (map[string]matcher, error) {
	if r.Pattern == "" {
		return nil, nil
	}
	alts := alternatives(r.Pattern)
	starts := make([][]string, len(alts))
	free := make([]bool, len(alts))
	for i, a := range alts {
		re, err := syntax.Parse(a, syntax.Perl)
		if err != nil {
			return nil, err
		}
		starts[i], free[i] = firstLiterals(re)
		free[i] = !free[i]
	}
	out := map[string]matcher{}
	for _, k := range r.Keywords {
		var mine []string
		for i, a := range alts {
			if free[i] || slices.ContainsFunc(starts[i], func(l string) bool {
				return strings.HasPrefix(l, k) || strings.HasPrefix(k, l)
			}) {
				mine = append(mine, a)
			}
		}
		if len(mine) == 0 {
			return nil, fmt.Errorf("no alternative of the pattern starts with keyword %q", k)
		}
		// Matched where the keyword starts (scanner.patterns).
		cre, err := regexp.Compile(`\A(?:` + strings.Join(mine, "|") + `)`)
		if err != nil {
			return nil, err
		}
		parsed, err := syntax.Parse(cre.String(), syntax.Perl)
		if err != nil {
			return nil, err
		}
		out[k] = matcher{rule: r, re: cre, needs: p.needleIndexes(needsOf(parsed, r.Case != "sensitive", k), r.Case != "sensitive")}
	}
	return out, nil
}

// needleIndexes are the indexes of words among p's needles, each added
// when it is new; looked for in lower-cased text when lowered is set.
func (p *Pack) needleIndexes(words []string, lowered bool) []int {
	var out []int
	for _, w := range words {
		key := w + "\x00s"
		if lowered {
			key = w + "\x00l"
		}
		k, ok := p.needleOf[key]
		if !ok {
			k = len(p.needles)
			p.needleOf[key] = k
			p.needles = append(p.needles, []byte(w))
			p.lowNeedle = append(p.lowNeedle, lowered)
			p.needlePairs = append(p.needlePairs, pairBits([]byte(w)))
		}
		out = append(out, k)
	}
	return out
}

// alternatives splits a pattern, as written, into its top-level
// alternatives, looking inside a group that holds all of it ("(a|b)"):
// the text of each, so that no alternative is printed back from its parse
// (which is slow for large classes, and a pack has hundreds).
func alternatives(pattern string) []string {
	if flagGroup.MatchString(pattern) || strings.Contains(pattern, `\Q`) {
		// Flags that hold to the end of the group, or quoted text, are
		// not split: the pattern is one alternative.
		return []string{pattern}
	}
	for {
		inner, ok := strings.CutPrefix(pattern, "(?:")
		if !ok && strings.HasPrefix(pattern, "(") && !strings.HasPrefix(pattern, "(?") {
			inner, ok = pattern[1:], true
		}
		if !ok || !strings.HasSuffix(inner, ")") {
			break
		}
		inner = inner[:len(inner)-1]
		if cuts(inner, true) == nil {
			break // the first group closes before the end: "(a)|(b)"
		}
		pattern = inner
	}
	var out []string
	from := 0
	for _, i := range cuts(pattern, false) {
		out = append(out, pattern[from:i])
		from = i + 1
	}
	return append(out, pattern[from:])
}

// cuts returns the offsets of the top-level "|" of a pattern; with
// balanced set, it returns nil if a group closes that did not open in it,
// and a non-nil slice otherwise.
func cuts(pattern string, balanced bool) []int {
	out := []int{}
	depth := 0
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case '[':
			// A class ends at the first ] that is not its first member.
			i++
			if i < len(pattern) && pattern[i] == '^' {
				i++
			}
			if i < len(pattern) && pattern[i] == ']' {
				i++
			}
			for i < len(pattern) && pattern[i] != ']' {
				if pattern[i] == '\\' {
					i++
				}
				i++
			}
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 && balanced {
				return nil
			}
		case '|':
			if depth == 0 {
				out = append(out, i)
			}
		}
	}
	return out
}

// firstLiterals are the lowercase literals a match of re must start with;
// ok is false when re may start otherwise (with a class, or optionally).
func firstLiterals(re *syntax.Regexp) (lits []string, ok bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{strings.ToLower(string(re.Rune))}, true
	case syntax.OpCapture:
		return firstLiterals(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			l, ok := firstLiterals(sub)
			if !ok {
				return nil, false
			}
			lits = append(lits, l...)
		}
		return lits, true
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			switch sub.Op {
			case syntax.OpWordBoundary, syntax.OpBeginText, syntax.OpBeginLine, syntax.OpEmptyMatch:
				continue
			}
			return firstLiterals(sub)
		}
	case syntax.OpCharClass:
		// A class of one letter in both cases ((?i)x) is that letter.
		if len(re.Rune) > 0 && len(re.Rune) <= 4 {
			var l []string
			for i := 0; i < len(re.Rune); i += 2 {
				for c := re.Rune[i]; c <= re.Rune[i+1]; c++ {
					l = append(l, strings.ToLower(string(c)))
				}
			}
			return l, true
		}
	}
	return nil, false
}

// Pack is a compiled rule pack. It is immutable and safe for concurrent use.
type Pack struct {
	version  string
	rules    []*Rule
	byID     map[string]*Rule
	detector map[string]*Rule
	combos   []*Rule
	keywords *automaton
	// needles are the strings the windows of pattern rules are looked
	// for (Requires, and matchers' needs); lowNeedle[i] is set when
	// needle i is looked for in lower-cased text.
	needles   [][]byte
	lowNeedle []bool
	// needlePairs[i] are the bits of needle i's pairs (bigrams).
	needlePairs [][]uint32
	needleOf    map[string]int
	// reference is set on the pack the tests compare this one with:
	// needs ignored, and requires looked for in each window.
	reference bool
	// rulesOf[k] are the matchers keyword k triggers.
	rulesOf [][]matcher
	// fetchWord[k]: keyword k is one of fetchWords.
	fetchWord []bool
}

var (
	defaultOnce sync.Once
	defaultPack *Pack
	defaultErr  error
)

// Default returns the embedded rule pack. It panics if the embedded pack is
// invalid, which TestEmbeddedPack rules out for every build.
func Default() *Pack {
	defaultOnce.Do(func() { defaultPack, defaultErr = Parse(rulesYAML) })
	if defaultErr != nil {
		panic(defaultErr)
	}
	return defaultPack
}

// Engine is the engine version the embedded pack scans as.
func Engine() string { return Default().Engine() }

// Engine is the pack's engine version: EnginePrefix and the pack's version.
func (p *Pack) Engine() string { return EnginePrefix + p.version }

// Rules returns the pack's rules in pack order.
func (p *Pack) Rules() []*Rule { return slices.Clone(p.rules) }

// Rule returns the rule with the id, or nil.
func (p *Pack) Rule(id string) *Rule { return p.byID[id] }

// parts are the rules a combination's item names: one id, or every rule
// under a prefix ("network.send.*").
func (p *Pack) parts(item string) []*Rule {
	prefix, group := strings.CutSuffix(item, "*")
	var out []*Rule
	for _, r := range p.rules {
		if r.ID == item || group && strings.HasPrefix(r.ID, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// Signal reports whether the rule is never reported alone.
func (r *Rule) Signal() bool { return r.Severity == 0 }

// The detectors written in code (detect.go), by the names a pack uses.
var detectors = []string{
	"unicode-tags", "bidi-controls", "zero-width-run", "variation-selector-run", "html-comment", "decoded-findings",
	"native-executable", "bytecode", "nested-archive", "eicar", "budget", "downloaded-file-run", "downloaded-code-eval",
}

// proseCategories are the categories whose rules read sentences, not
// commands: markdown joins a paragraph's lines, so one may wrap.
var proseCategories = map[Category]bool{"prompt-injection": true, "hidden-text": true, "agent-safety": true}

// The validators a pattern rule may name (validate.go).
var validators = map[string]func(text []byte, start, end int) bool{
	"not-example":      both(notExample, notPlaceholder),
	"pem-body":         pemBody,
	"github-checksum":  both(githubChecksum, notPlaceholder),
	"reads-credential": readsCredential,
	"cron-install":     cronInstall,
	"heredoc-program":  heredocStartsProgram,
	"writes-unit":      writesUnit,
	"not-negated":      notNegated,
	"asserted":         asserted,
	"cited":            cited,
	"not-browser":      notBrowser,
	"runs-stdin":       runsStdin,
	"runs-download":    runsDownload,
	"not-placeholder":  notPlaceholder,
	"not-loopback":     notLoopback,
	"dev-tcp-shell":    devTCPShell,
	"adds-autostart":   addsAutostart,
	"wipes":            wipes,
	"dumps-env":        dumpsEnvironment,
	"conceals":         concealsDoings,
}

type rawPack struct {
	Version string    `yaml:"version"`
	Rules   []rawRule `yaml:"rules"`
}

type rawRule struct {
	Rule     `yaml:",inline"`
	Severity string `yaml:"severity"`
}

// Parse reads and compiles a rule pack. Every detector must have its rule,
// every id be unique, every combination name rules of the pack, and every
// pattern compile; a pattern rule needs keywords, which decide where it runs.
func Parse(doc []byte) (*Pack, error) {
	var raw rawPack
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("scan: rule pack: %w", err)
	}
	if raw.Version == "" || strings.ContainsAny(raw.Version, " /\t\n") {
		return nil, fmt.Errorf("scan: rule pack: version %q: want a non-empty word", raw.Version)
	}
	p := &Pack{version: raw.Version, byID: map[string]*Rule{}, detector: map[string]*Rule{}, needleOf: map[string]int{}}
	var words []string
	wordIndex := map[string]int{}
	for i := range raw.Rules {
		r := &raw.Rules[i].Rule
		r.severity = raw.Rules[i].Severity
		if err := p.add(r); err != nil {
			return nil, fmt.Errorf("scan: rule pack: rule %d (%s): %w", i+1, r.ID, err)
		}
		ms, err := p.matchers(r)
		if err != nil {
			return nil, fmt.Errorf("scan: rule pack: rule %d (%s): %w", i+1, r.ID, err)
		}
		for w, m := range ms {
			k, ok := wordIndex[w]
			if !ok {
				k = len(words)
				wordIndex[w] = k
				words = append(words, w)
				p.rulesOf = append(p.rulesOf, nil)
			}
			p.rulesOf[k] = append(p.rulesOf[k], m)
		}
	}
	for _, r := range p.combos {
		for _, id := range r.All {
			if len(p.parts(id)) == 0 || id == r.ID {
				return nil, fmt.Errorf("scan: rule pack: %s combines %q, which is no other rule of the pack", r.ID, id)
			}
		}
	}
	for _, d := range detectors {
		if p.detector[d] == nil {
			return nil, fmt.Errorf("scan: rule pack: no rule for detector %q", d)
		}
	}
	// A download is looked for at each fetch word, a keyword of a rule or
	// not (urlretrieve starts no rule's match).
	for _, w := range fetchWords {
		if _, ok := wordIndex[w]; !ok {
			wordIndex[w] = len(words)
			words = append(words, w)
			p.rulesOf = append(p.rulesOf, nil)
		}
	}
	p.keywords = newAutomaton(words)
	p.fetchWord = make([]bool, len(words))
	for _, w := range fetchWords {
		p.fetchWord[wordIndex[w]] = true
	}
	return p, nil
}

// add checks and compiles one rule.
func (p *Pack) add(r *Rule) error {
	if r.ID == "" || strings.ContainsAny(r.ID, " \t\n,") {
		return errors.New("an id is a non-empty word")
	}
	if p.byID[r.ID] != nil {
		return errors.New("a second rule with this id")
	}
	if !slices.Contains(Categories, r.Category) {
		return fmt.Errorf("category %q is unknown", r.Category)
	}
	if r.severity != "signal" {
		s, err := ParseSeverity(r.severity)
		if err != nil {
			return err
		}
		r.Severity = s
	}
	if r.Message == "" {
		return errors.New("a rule needs a message")
	}
	kinds := 0
	for _, set := range []bool{r.Pattern != "", r.Detector != "", len(r.All) > 0} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return errors.New("a rule has exactly one of pattern, detector and all")
	}
	switch {
	case r.Pattern != "":
		if len(r.Keywords) == 0 {
			return errors.New("a pattern rule needs keywords")
		}
		for _, w := range r.Keywords {
			if w == "" || w != strings.ToLower(w) {
				return fmt.Errorf("keyword %q: keywords are non-empty and lowercase", w)
			}
		}
		switch r.Case {
		case "":
			// Matched against the lower-cased text (scanner.patterns).
			if p := escapes.ReplaceAllString(r.Pattern, ""); strings.ToLower(p) != p {
				return errors.New("a case-insensitive pattern is written in lower case")
			}
			for _, w := range r.Requires {
				if w != strings.ToLower(w) {
					return fmt.Errorf("requires %q: written in lower case", w)
				}
			}
		case "sensitive":
		default:
			return fmt.Errorf("case %q: want sensitive or nothing", r.Case)
		}
		if _, err := regexp.Compile(r.Pattern); err != nil {
			return err
		}
		r.requires = p.needleIndexes(r.Requires, r.Case != "sensitive")
		if r.Validator != "" {
			if r.valid = validators[r.Validator]; r.valid == nil {
				return fmt.Errorf("validator %q is unknown", r.Validator)
			}
		}
		switch r.Scope {
		case "", "comment":
		default:
			return fmt.Errorf("scope %q: want comment or nothing", r.Scope)
		}
	case r.Detector != "":
		if !slices.Contains(detectors, r.Detector) {
			return fmt.Errorf("detector %q is unknown", r.Detector)
		}
		if p.detector[r.Detector] != nil {
			return fmt.Errorf("detector %q has a rule already", r.Detector)
		}
		p.detector[r.Detector] = r
	default:
		p.combos = append(p.combos, r)
	}
	if r.Signal() && r.Pattern == "" {
		return errors.New("only pattern rules may be signals")
	}
	r.index = len(p.rules)
	r.prose = proseCategories[r.Category]
	p.rules = append(p.rules, r)
	p.byID[r.ID] = r
	return nil
}
