package indexer

import (
	"slices"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
)

// work is what one round still has to read: keys, and config entries
// (targets) whose bytes must be prepared. Each is taken once per round; a
// key or target added after it was taken is not taken again, so a round
// ends however its results expand it.
type work struct {
	keys    []string
	targets []target
	seen    map[string]bool
	queued  map[target]bool
}

func newWork() *work { return &work{seen: map[string]bool{}, queued: map[target]bool{}} }

// addKeys queues keys not queued before in this round.
func (w *work) addKeys(keys ...string) {
	for _, k := range keys {
		if !w.seen[k] {
			w.seen[k] = true
			w.keys = append(w.keys, k)
		}
	}
}

// addTarget queues a config entry not queued before in this round.
func (w *work) addTarget(t target) {
	if !w.queued[t] {
		w.queued[t] = true
		w.targets = append(w.targets, t)
	}
}

// take returns the queued keys and targets, and empties the queue.
func (w *work) take() (keys []string, targets []target) {
	keys, targets = w.keys, w.targets
	w.keys, w.targets = nil, nil
	sortTargets(targets)
	return keys, targets
}

// empty reports whether nothing is queued.
func (w *work) empty() bool { return len(w.keys) == 0 && len(w.targets) == 0 }

// class is what a round does with a key.
type class int

const (
	// classIgnored: outside the bucket contract (or a folder marker); recorded, never read.
	classIgnored class = iota
	// classHidden: a path element starts with a dot (.DS_Store): ignored.
	classHidden
	// classDrop: a skill or sub-agent: read, validated, claimed.
	classDrop
	// classFile: under files/: the bytes of the config entries that name it.
	classFile
	// classConfig: agent-skills.yaml, which every round reads as state.
	classConfig
	// classReport: reported while it exists, with a rejection or a warning:
	// an invalid key, a file beside a SKILL.md, a file in none of the forms.
	classReport
)

// classify says what a round does with key. It is pure: it reads nothing.
func classify(key string) (class, artifact.Key) {
	if hidden(key) {
		return classHidden, artifact.Key{}
	}
	k, err := artifact.ParseKey(key)
	if err != nil {
		return classReport, artifact.Key{} // an invalid key is reported while it exists
	}
	switch k.Kind {
	case artifact.KindSkill, artifact.KindSubagent:
		return classDrop, k
	case artifact.KindFile:
		return classFile, k
	case artifact.KindConfig:
		return classConfig, k
	case artifact.KindBeside:
		return classReport, k
	case artifact.KindIgnored:
		if code, _, warning := contractMiss(key); code != "" || warning != "" {
			return classReport, k
		}
	}
	return classIgnored, k
}

// hidden reports whether a path element of key starts with a dot: .DS_Store,
// AppleDouble "._x.md" files and .gitkeep that folder uploads bring along.
// They are ignored, neither published nor refused, as the local directory
// store hides them and `skilldrop publish` leaves them out of an archive.
func hidden(key string) bool {
	for elem := range strings.SplitSeq(key, "/") {
		if strings.HasPrefix(elem, ".") && elem != "." && elem != ".." {
			return true
		}
	}
	return false
}

// claimantPrefix is the key prefix under which every key that could claim
// t lies.
func claimantPrefix(t target) string {
	if t.Kind == catalog.KindSubagent {
		return artifact.NamePrefix(artifact.KindSubagent, "", t.Name)
	}
	return artifact.NamePrefix(artifact.KindSkill, t.Listing, t.Name)
}

// configTargets returns every target cfg names: its entries, and for each
// listing reference the listing-only skill of that name it would exclude.
func configTargets(cfg *skillsconfig.Config) []target {
	var out []target
	for _, ce := range allConfigEntries(cfg) {
		out = append(out, target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name})
	}
	if cfg != nil {
		for _, l := range cfg.Listings {
			for _, name := range l.Refs {
				out = append(out, target{Kind: catalog.KindSkill, Listing: l.Name, Name: name})
			}
		}
	}
	return out
}

// entriesNaming returns the config entries of cfg whose bytes are the files/ key.
func entriesNaming(cfg *skillsconfig.Config, key string) []target {
	var out []target
	for _, ce := range allConfigEntries(cfg) {
		if ce.FilePath == key {
			out = append(out, target{Kind: ce.Kind, Listing: ce.Listing, Name: ce.Name})
		}
	}
	return out
}

func sortTargets(ts []target) {
	slices.SortFunc(ts, func(a, b target) int { return strings.Compare(string(a.Kind)+"/"+a.id(), string(b.Kind)+"/"+b.id()) })
}
