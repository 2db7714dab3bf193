package indexer

import (
	"context"
	"fmt"
	"slices"

	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// StrayConfigs lists the keys at st's root that are meant as the config but
// are never read as one (skillsconfig.IsStray: agent-skills.yml,
// Agent-Skills.yaml, agent-skills.yaml.bak …), in key order: a listing of
// each of skillsconfig.StrayPrefixes, so the source prefixes are not read.
func StrayConfigs(ctx context.Context, st store.Store) ([]string, error) {
	var out []string
	for _, prefix := range skillsconfig.StrayPrefixes {
		infos, err := st.List(ctx, prefix)
		if err != nil {
			return nil, fmt.Errorf("list %s*: %w", prefix, err)
		}
		for _, info := range infos {
			if skillsconfig.IsStray(info.Key) {
				out = append(out, info.Key)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
