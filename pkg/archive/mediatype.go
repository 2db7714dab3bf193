package archive

import (
	"bytes"
	"path"
	"strings"
	"unicode/utf8"
)

// mediaTypes maps the extensions skills commonly carry to their media
// types. The table is the package's own, not the system's (mime's tables
// differ between machines), so a file has the same type wherever it was
// validated.
var mediaTypes = map[string]string{
	".md": "text/markdown", ".markdown": "text/markdown",
	".txt": "text/plain", ".text": "text/plain", ".log": "text/plain",
	".html": "text/html", ".htm": "text/html", ".css": "text/css",
	".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".js": "text/javascript", ".mjs": "text/javascript", ".cjs": "text/javascript",
	".ts": "text/x-typescript", ".tsx": "text/x-typescript", ".jsx": "text/javascript",
	".py": "text/x-python", ".rb": "text/x-ruby", ".go": "text/x-go", ".rs": "text/x-rust",
	".java": "text/x-java", ".kt": "text/x-kotlin", ".swift": "text/x-swift",
	".c": "text/x-c", ".h": "text/x-c", ".cc": "text/x-c++", ".cpp": "text/x-c++", ".hpp": "text/x-c++",
	".cs": "text/x-csharp", ".php": "text/x-php", ".pl": "text/x-perl", ".lua": "text/x-lua",
	".r": "text/x-r", ".sh": "text/x-shellscript", ".bash": "text/x-shellscript", ".zsh": "text/x-shellscript",
	".ps1": "text/plain", ".bat": "text/plain", ".ini": "text/plain", ".cfg": "text/plain", ".conf": "text/plain",
	".env": "text/plain", ".rst": "text/x-rst", ".tex": "text/x-tex", ".diff": "text/x-diff", ".patch": "text/x-diff",
	".json": "application/json", ".jsonl": "application/jsonl", ".xml": "application/xml",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".sql": "application/sql", ".graphql": "application/graphql",
	".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp", ".ico": "image/vnd.microsoft.icon", ".bmp": "image/bmp",
	".pdf": "application/pdf", ".zip": "application/zip", ".gz": "application/gzip", ".tgz": "application/gzip",
	".tar": "application/x-tar", ".wasm": "application/wasm",
	".woff": "font/woff", ".woff2": "font/woff2", ".ttf": "font/ttf", ".otf": "font/otf",
	".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg", ".mp4": "video/mp4", ".webm": "video/webm",
}

// MediaType is the media type of a file at name (a slash-separated path)
// holding data: the package's table by extension, case-insensitively;
// without a known extension, text/plain for valid UTF-8 without NUL bytes
// (README, LICENSE, Makefile) and application/octet-stream otherwise.
func MediaType(name string, data []byte) string {
	if t, ok := mediaTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	if utf8.Valid(data) && bytes.IndexByte(data, 0) < 0 {
		return "text/plain"
	}
	return "application/octet-stream"
}
