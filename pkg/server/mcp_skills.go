package server

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listSkillsParams are skills/list's (a PaginatedRequest).
type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// cacheable carries the fields SEP-2640's results share: resultType
// "complete" and the caching hints (CacheableResult).
type cacheable struct {
	ResultType string `json:"resultType"`
	TTLMs      int    `json:"ttlMs"`
	CacheScope string `json:"cacheScope"`
}

func cacheableFor(c *mcpCall) cacheable {
	return cacheable{ResultType: "complete", TTLMs: mcpTTLMs, CacheScope: c.cacheScope()}
}

// listSkillsResult is SEP-2640's ListSkillsResult.
type listSkillsResult struct {
	mcp.ResultBase
	cacheable
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

// listSkills answers skills/list: the caller's skills in URI order, a page
// bounded by its encoded size, each entry a complete manifest (every file
// with its digest and size) with the frontmatter verbatim.
func (s *Server) listSkills(ctx context.Context, _ *mcp.ServerSession, p *listSkillsParams) (*listSkillsResult, error) {
	call := callFrom(ctx)
	if call == nil {
		return nil, errNoCall
	}
	cursor := ""
	if p != nil {
		cursor = p.Cursor
	}
	v := s.index(call)
	from, to, count, next, err := v.skillPage(cursor)
	if err != nil {
		return nil, err
	}
	res := &listSkillsResult{cacheable: cacheableFor(call), Skills: make([]json.RawMessage, 0, count), NextCursor: next}
	for _, sk := range v.skills[from:to] {
		if !v.seen(sk) {
			continue
		}
		res.Skills = append(res.Skills, sk.json)
	}
	return res, nil
}

// getSkillParams are skills/get's.
type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

// getSkillResult is SEP-2640's GetSkillResult.
type getSkillResult struct {
	mcp.ResultBase
	cacheable
	Skill json.RawMessage `json:"skill"`
}

// getSkill answers skills/get for the URI of a served skill's SKILL.md;
// anything else, a hidden skill included, is -32602.
func (s *Server) getSkill(ctx context.Context, _ *mcp.ServerSession, p *getSkillParams) (*getSkillResult, error) {
	call := callFrom(ctx)
	if call == nil {
		return nil, errNoCall
	}
	uri := ""
	if p != nil {
		uri = p.URI
	}
	sk := s.index(call).skill(uri)
	if sk == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "No skill is served at " + clipURI(uri) + "."}
	}
	return &getSkillResult{cacheable: cacheableFor(call), Skill: sk.json}, nil
}

// errNoCall: a request reached a handler without passing serveMCP (a bug).
var errNoCall = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error."}

// clipURI bounds a client's URI echoed in an error message.
func clipURI(uri string) string {
	const limit = 200
	if len(uri) <= limit {
		return uri
	}
	return uri[:limit] + "…"
}
