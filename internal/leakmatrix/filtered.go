package leakmatrix

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/skilldrop/skilldrop/pkg/apikey"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/server"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// Filtered answers as a fresh handler over a copy of src's catalog that
// holds only what c may see (the entries, listings and the references
// between them; the blobs and signed objects copied from src), with the same keys and base
// URL: what the caller must be answered, with nothing it cannot see there
// to vary its answers.
func Filtered(t testing.TB, src store.Store, c Caller, keys apikey.Source, base, version string) Do {
	t.Helper()
	ctx := context.Background()
	cat, _, err := catalog.Load(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	sees := map[string]bool{}
	for _, e := range entries {
		kind := catalog.KindSkill
		if e.agent {
			kind = catalog.KindSubagent
		}
		sees[string(kind)+"/"+catalog.ID(e.listing, e.name)] = c.sees(e)
	}
	for id := range cat.Skills {
		if !sees[string(catalog.KindSkill)+"/"+id] {
			delete(cat.Skills, id)
		}
	}
	for id := range cat.Subagents {
		if !sees[string(catalog.KindSubagent)+"/"+id] {
			delete(cat.Subagents, id)
		}
	}
	for name, l := range cat.Listings {
		if !c.seesListing(name) {
			delete(cat.Listings, name)
			continue
		}
		l.Skills = slices.DeleteFunc(slices.Clone(l.Skills), func(s string) bool { return cat.Skills[s] == nil })
	}
	cat.Documents, cat.DocumentOrigins = nil, nil
	raw, err := catalog.Encode(cat, 0)
	if err != nil {
		t.Fatal(err)
	}
	dst := store.NewMemory()
	if _, err := dst.Put(ctx, catalog.Key, raw, store.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	// The blobs, and the rendered objects: among them what the operator's
	// key signed (the AI Catalog, the bundles), which a copy cannot sign
	// again; the stored feed documents there are not named any more.
	blobs, err := src.List(ctx, artifact.BlobsPrefix)
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := src.List(ctx, artifact.RenderedPrefix)
	if err != nil {
		t.Fatal(err)
	}
	blobs = append(blobs, rendered...)
	for _, b := range blobs {
		body, _, err := store.ReadAll(ctx, src, b.Key, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := dst.Put(ctx, b.Key, body, store.PutOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	h, err := server.New(server.Config{Store: dst, Keys: keys, PublicBaseURL: base, Version: version})
	if err != nil {
		t.Fatal(err)
	}
	return func(r Request) Response {
		req := httptest.NewRequest(r.Method, r.Target, strings.NewReader(r.Body))
		for k, v := range r.Header {
			req.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return Response{Status: w.Code, Header: w.Header(), Body: w.Body.Bytes()}
	}
}
