package server

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/skilldrop/skilldrop/pkg/artifact"
)

// listResources answers resources/list: every file of the caller's
// skills, in URI order, paginated like skills/list. A SKILL.md is named
// and described by its frontmatter; directories are not listed (they are
// read with resources/directory/read).
func (s *Server) listResources(call *mcpCall, req mcp.Request) (*mcp.ListResourcesResult, error) {
	cursor := ""
	if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil {
		cursor = p.Cursor
	}
	v := s.index(call)
	from, to, count, next, err := v.filePage(cursor)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourcesResult{
		Cacheable:  mcp.Cacheable{TTLMs: mcpTTLMs, CacheScope: call.cacheScope()},
		Resources:  make([]*mcp.Resource, 0, count),
		NextCursor: next,
	}
	for _, f := range v.files[from:to] {
		if !v.seen(f.skill) {
			continue
		}
		res.Resources = append(res.Resources, f.resource)
	}
	return res, nil
}

// errUnverified answers a read whose bytes did not match their pin: the
// content is not sent, and nothing about it is said.
var errUnverified = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "The file is temporarily unavailable."}

// readSkillFile answers resources/read of a skill:// URI under the
// integrity contract: the file's own blob is read, re-hashed and compared
// with the digest and size the catalog pinned before anything is
// answered; a mismatch answers an error with no byte of the content, the
// audit event agent_skill.digest_mismatch naming the file and the
// DigestMismatch metric. Text files are answered as text, the others as
// base64 (artifact.ReadAsText). A URI that names no file the caller may
// see is not found, like any other.
func (s *Server) readSkillFile(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	call := callFrom(ctx)
	if call == nil {
		return nil, errNoCall
	}
	uri := req.Params.URI
	f := s.index(call).file(uri)
	if f == nil {
		return nil, mcp.ResourceNotFoundError(clipURI(uri))
	}
	if f.file.Size < 0 || f.file.Size > artifact.MCPMaxTotalBytes {
		call.rq.log.Error("mcp: file larger than a served skill can be", "skill", f.skill.entry.ID(), "path", f.file.Path, "size", f.file.Size)
		return nil, errUnverified
	}
	body, observed, _, err := s.readBlob(ctx, f.file.Digest, f.file.Size, artifact.MCPMaxTotalBytes, newBuffer)
	switch {
	case errors.Is(err, errMismatch):
		s.mismatch(call.r, call.rq, f.skill.entry, f.skill.ver, f.file.Path, f.file.Digest, observed)
		return nil, errUnverified
	case err != nil:
		call.rq.log.Error("mcp: read file blob", "skill", f.skill.entry.ID(), "path", f.file.Path, "error", err)
		return nil, errUnverified
	}
	content := &mcp.ResourceContents{URI: uri, MIMEType: f.file.MediaType}
	if artifact.ReadAsText(f.file.MediaType, body) {
		content.Text = string(body)
	} else {
		content.Blob = body
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{content}}, nil
}
