package indexer

import (
	"context"
	"github.com/skilldrop/skilldrop/pkg/bytesize"
	"strings"

	"github.com/skilldrop/skilldrop/pkg/archive"
	"github.com/skilldrop/skilldrop/pkg/artifact"
	"github.com/skilldrop/skilldrop/pkg/skillsconfig"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// bytesOf names where an entry's bytes are: one of a bucket key (a drop,
// or the files/ key of a config entry), an inline body, or an external URL.
type bytesOf struct {
	key, body, url string
}

// readBytes resolves an entry's bytes, at most limit of them. A bucket key
// answers as store.ReadAll does (ErrNotFound, ErrTooLarge, with the
// object's Info); a URL is fetched once through the fetch policy, bounded
// by the fetch timeout; a body is its own bytes.
func (ix *Indexer) readBytes(ctx context.Context, src bytesOf, limit int64) ([]byte, store.Info, error) {
	switch {
	case src.key != "":
		return store.ReadAll(ctx, ix.store, src.key, limit)
	case src.url != "":
		fctx, cancel := context.WithTimeout(ctx, ix.fetchTimeout)
		defer cancel()
		b, err := ix.fetcher.Get(fctx, src.url, limit)
		return b, store.Info{}, err
	}
	return []byte(src.body), store.Info{}, nil
}

// externalFormat is the format of an external entry: the bytes' own when
// fetched, else the URL's extension (archives) or markdown.
func externalFormat(ce *skillsconfig.Entry, data []byte) artifact.Format {
	if ce.Type != artifact.TypeArchive {
		return artifact.FormatMarkdown
	}
	switch archive.Sniff(data) {
	case archive.FormatTarGz:
		return artifact.FormatTarGz
	case archive.FormatZip:
		return artifact.FormatZip
	}
	u := ce.ExternalURL
	if i := strings.IndexAny(u, "?#"); i >= 0 {
		u = u[:i]
	}
	if f, _ := artifact.FormatOf(u); f == artifact.FormatTarGz {
		return f
	}
	return artifact.FormatZip
}

// tooLarge says that an artifact of size bytes as the store answered (0:
// unknown) is over the cap limit, in sizes for people, and what to do.
func tooLarge(size, limit int64) string {
	msg := "larger than max_artifact_bytes (" + bytesize.Format(limit) + ")"
	if size > limit {
		msg = "larger than max_artifact_bytes: " + bytesize.Exceeds(size, limit)
	}
	return msg + "; " + skillsconfig.Remedy(archive.CodeTooLarge)
}
