package server

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readDirectoryParams are resources/directory/read's.
type readDirectoryParams struct {
	mcp.ParamsBase
	URI    string `json:"uri"`
	Cursor string `json:"cursor,omitempty"`
}

// readDirectoryResult is SEP-2640's ReadResourceDirectoryResult.
type readDirectoryResult struct {
	mcp.ResultBase
	cacheable
	Resources  []*mcp.Resource `json:"resources"`
	NextCursor string          `json:"nextCursor,omitempty"`
}

// readDirectory answers resources/directory/read: the direct children of
// a directory of the caller's skills (a skill's root, a directory in it,
// or a listing's root), files with their resource metadata and
// subdirectories as inode/directory, in URI order. Anything else, a file
// included, is -32602.
func (s *Server) readDirectory(ctx context.Context, _ *mcp.ServerSession, p *readDirectoryParams) (*readDirectoryResult, error) {
	call := callFrom(ctx)
	if call == nil {
		return nil, errNoCall
	}
	var uri, cursor string
	if p != nil {
		uri, cursor = p.URI, p.Cursor
	}
	children, ok := s.index(call).dir(uri)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: clipURI(uri) + " is not a directory resource this server serves."}
	}
	from, to, _, next, err := pageOf(len(children),
		func(i int) string { return children[i].resource.URI }, func(i int) int { return children[i].size }, nil, cursor)
	if err != nil {
		return nil, err
	}
	res := &readDirectoryResult{cacheable: cacheableFor(call), Resources: make([]*mcp.Resource, 0, to-from), NextCursor: next}
	for _, c := range children[from:to] {
		res.Resources = append(res.Resources, c.resource)
	}
	return res, nil
}
