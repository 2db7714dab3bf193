package webcatalog

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/routes"
)

//go:embed assets/catalog.css assets/catalog.js
var assetFiles embed.FS

// Asset is one embedded file the pages load. Its name carries a digest of
// its bytes, so it never changes at a URL and may be cached for long.
type Asset struct {
	// Name is the file name below routes.CatalogAssets.
	Name        string
	ContentType string
	Body        []byte
	// ETag is the strong ETag of Body.
	ETag string
	path string
}

var (
	stylesheet = loadAsset("catalog.css", "text/css; charset=utf-8")
	script     = loadAsset("catalog.js", "text/javascript; charset=utf-8")
)

func loadAsset(file, contentType string) *Asset {
	body, err := assetFiles.ReadFile("assets/" + file)
	if err != nil {
		panic(err) // embedded above: cannot fail
	}
	sum := sha256.Sum256(body)
	tag := hex.EncodeToString(sum[:6])
	stem, ext, _ := strings.Cut(file, ".")
	name := stem + "-" + tag + "." + ext
	return &Asset{Name: name, ContentType: contentType, Body: body, ETag: `"` + hex.EncodeToString(sum[:]) + `"`,
		path: routes.CatalogAssets + name}
}

// AssetNamed returns the embedded asset with the file name, or nil.
func AssetNamed(name string) *Asset {
	for _, a := range []*Asset{stylesheet, script} {
		if a.Name == name {
			return a
		}
	}
	return nil
}

// AssetCacheControl is the Cache-Control of an asset: its name changes
// with its bytes, so it never goes stale.
const AssetCacheControl = "public, max-age=31536000, immutable"

// ContentSecurityPolicy is every catalog response's CSP: the page's own
// origin for its stylesheet, script and forms, nothing inline, no plugins,
// no frames of it anywhere, no base URL tricks, and images only from the
// origin itself (a document's images are shown as links, never loaded).
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; " +
	"frame-ancestors 'none'"

// Headers sets the security headers every catalog response carries, pages,
// assets and errors alike.
func Headers(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=(), payment=(), usb=()")
}
