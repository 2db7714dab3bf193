package server

import (
	"encoding/json"
	"net/http"
)

// health is the body of the health check.
type health struct {
	Status  string `json:"status"`
	Version string `json:"version"`
}

// serveHealth answers the health check: 200 when the catalog can be read,
// as every feed needs it, else the 503 they would answer (also before the
// first catalog is written). It says nothing of what is published, so it
// tells no caller more than the version the MCP endpoint reports.
func (s *Server) serveHealth(w http.ResponseWriter, r *http.Request, rq *request) {
	if !readMethod(w, r) {
		return
	}
	if _, ok := s.snapshot(w, r, rq); !ok {
		return
	}
	b, _ := json.Marshal(health{Status: "ok", Version: s.version}) // cannot fail: strings only
	w.Header().Set("Cache-Control", ccNoStore)
	writeJSONBytes(w, r, append(b, '\n'), false)
}
