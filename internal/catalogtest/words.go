package catalogtest

import (
	"math/rand/v2"
	"strings"
)

// common are frequent English words, most frequent first, of the kind skill
// descriptions are written in. They head the vocabulary the Zipf sampler
// draws from, so descriptions read like prose and compress like it.
var common = strings.Fields(`
the a and to of for in with on from that this by or as is are be it when your
use uses using used run runs running check checks review reviews reviewed
build builds deploy deploys deployed deployment test tests testing tested write
writes writing create creates created creating update updates updated find
finds fix fixes fixed fixing make makes keep keeps read reads report reports
change changes changed add adds remove removes open opens list lists show shows
code file files project projects service services team teams user users data
pull request requests branch branches commit commits release releases version
versions note notes issue issues bug bugs error errors log logs alert alerts
incident incidents ticket tickets support customer customers page pages doc
docs document documents guide guides policy policies rule rules step steps
task tasks job jobs workflow workflows pipeline pipelines cluster clusters
database databases query queries table tables schema schemas index indexes
cache caches config configs setting settings secret secrets key keys token
tokens account accounts access permission permissions role roles audit audits
security scan scans vulnerability vulnerabilities dependency dependencies
package packages library libraries module modules api apis endpoint endpoints
request response server servers client clients network traffic latency
metric metrics dashboard dashboards monitor monitors trace traces event events
message messages queue queues stream streams batch batches storage bucket
buckets object objects image images container containers kubernetes docker
terraform cloud region regions cost costs budget budgets invoice invoices
contract contracts legal review summary summaries draft drafts email emails
meeting meetings calendar schedule schedules plan plans roadmap roadmaps
design designs diagram diagrams spreadsheet spreadsheets chart charts
pdf pdfs form forms invoice receipt receipts translate translation language
languages text texts write writer editor style tone grammar spelling
changelog changelogs migration migrations backup backups restore restores
rollback rollbacks incident triage oncall escalation escalations runbook
runbooks playbook playbooks checklist checklists template templates
onboarding offboarding hiring interview interviews candidate candidates
sales lead leads marketing campaign campaigns content social post posts
analytics analysis analyses insight insights forecast forecasts model models
training prompt prompts agent agents tool tools skill skills command commands
script scripts shell terminal browser extension extensions plugin plugins
mobile web frontend backend component components layout layouts theme
accessibility performance profile profiles benchmark benchmarks memory cpu
quickly safely carefully automatically before after every each all any new
old small large first last next previous current recent daily weekly monthly
local remote public private internal external shared common simple clear
short long full partial main default custom standard specific related
without into over under between across through about against within
`)

// syllables build the long tail of rarer words: invented, but pronounceable
// and varied, so no two descriptions share long runs of text.
var (
	onsets = strings.Fields("b c d f g h j k l m n p r s t v w z br cr dr fl gr pl pr sk sl st str tr ch sh th")
	nuclei = strings.Fields("a e i o u ai ea ee io ou")
	codas  = []string{"", "", "n", "r", "s", "t", "l", "m", "nd", "st", "rk", "ng", "x"}
)

// vocabulary is common followed by tailWords invented words.
const tailWords = 6000

var vocabulary = func() []string {
	rng := rand.New(rand.NewPCG(0x5eed, 0x70ca))
	words := append([]string(nil), common...)
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	for len(words) < len(common)+tailWords {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteString(onsets[rng.IntN(len(onsets))])
			b.WriteString(nuclei[rng.IntN(len(nuclei))])
		}
		b.WriteString(codas[rng.IntN(len(codas))])
		if w := b.String(); len(w) >= 3 && !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}()

// text draws words from the vocabulary with a Zipf distribution, as natural
// language uses words.
type text struct {
	rng  *rand.Rand
	zipf *rand.Zipf
}

func newText(seed, stream uint64) *text {
	rng := rand.New(rand.NewPCG(seed, stream))
	return &text{rng: rng, zipf: rand.NewZipf(rng, 1.07, 2, uint64(len(vocabulary)-1))}
}

func (t *text) word() string { return vocabulary[t.zipf.Uint64()] }

// stopWords is how many of the most common words never start a name part.
const stopWords = 30

// nameWord is a word for a skill name: names are made of content words,
// spread far more evenly than prose (few names start with "the"), a
// quarter of them rare.
func (t *text) nameWord() string {
	if t.rng.IntN(4) == 0 {
		return vocabulary[len(common)+t.rng.IntN(tailWords)]
	}
	return common[stopWords+t.rng.IntN(len(common)-stopWords)]
}

// sentences returns about n characters (at most n, unless the first word
// alone is longer) of sentences: capitalised, with commas now and then, each ending in a period.
// It uses only letters, spaces, commas and periods, so it is a plain YAML
// scalar that every parser reads alike.
func (t *text) sentences(n int) string {
	var b strings.Builder
	b.Grow(n + 16)
	start := true
	for {
		w := t.word()
		// Room for the word, a separator and the final period.
		if b.Len() > 0 && b.Len()+1+len(w)+1 > n {
			break
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if start {
			b.WriteString(strings.ToUpper(w[:1]))
			b.WriteString(w[1:])
			start = false
		} else {
			b.WriteString(w)
		}
		switch t.rng.IntN(14) {
		case 0:
			b.WriteByte(',')
		case 1:
			b.WriteByte('.')
			start = true
		}
	}
	s := strings.TrimRight(b.String(), ",.")
	return s + "."
}
