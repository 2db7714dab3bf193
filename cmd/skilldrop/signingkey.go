package main

import (
	"context"
	"errors"
	"flag"
	"io"

	"github.com/skilldrop/skilldrop/pkg/catalog"
	"github.com/skilldrop/skilldrop/pkg/indexer"
	"github.com/skilldrop/skilldrop/pkg/signing"
	"github.com/skilldrop/skilldrop/pkg/store"
)

// signingKeyFlag adds --signing-key to a command that indexes a directory:
// the operator's key as a local PKCS#8 P-256 PEM, which signs what it
// publishes (the deployment's indexer signs with its KMS key instead). The
// returned function loads it, or returns nil without the flag.
func signingKeyFlag(fs *flag.FlagSet) func() (signing.Signer, error) {
	path := fs.String("signing-key", "", "sign what is published with this PKCS#8 P-256 private key (PEM; openssl genpkey -algorithm EC\n"+
		"-pkeyopt ec_paramgen_curve:P-256 writes one); a catalog once signed is written only with a key")
	return func() (signing.Signer, error) {
		if *path == "" {
			return nil, nil
		}
		return signing.LoadPrivateKeyPEM(*path)
	}
}

// dirSigner loads --signing-key for a command whose target is a directory:
// a bucket's publications are signed by its indexer Lambda, with the KMS
// key only that function may use, never from a workstation. ok is false
// (with the exit status) when the command must stop.
func dirSigner(name string, tg *target, load func() (signing.Signer, error), stderr io.Writer) (s signing.Signer, code int, ok bool) {
	s, err := load()
	switch {
	case err != nil:
		printf(stderr, "%s: --signing-key: %v\n", name, err)
		return nil, exitUsage, false
	case s != nil && tg.bucket != "":
		printf(stderr, "%s: --signing-key applies to --dir: a bucket's publications are signed by its indexer, with its KMS key\n", name)
		return nil, exitUsage, false
	}
	return s, exitOK, true
}

// refuseUnsigned stops a command that would change a directory's sources
// (did: "uploaded", "deleted") when the directory's catalog is signed and
// the command has no --signing-key: indexing the change would then fail
// with the source already changed, so that `serve` publishes what the
// command said it could not. ok is false (with the exit status) when the
// command must stop; nothing has been changed then. A --signing-key other
// than the catalog's is refused alike: publish and withdraw change one
// skill, and would otherwise rotate the catalog's key as a side effect
// (reindex --signing-key is the deliberate way to).
func refuseUnsigned(ctx context.Context, name string, tg *target, ix *indexer.Indexer, st store.Store, did string, stderr io.Writer) (code int, ok bool) {
	if tg.dir == "" {
		return exitOK, true // a bucket's indexer signs
	}
	c, _, err := catalog.Load(ctx, st)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return exitOK, true
	case err != nil:
		printf(stderr, "%s: %v\n", name, err)
		return exitFailure, false
	}
	if ix.CanWrite(c) == nil {
		cur := c.Signing.CurrentKey()
		if ix.KeyID() == "" || cur == nil || cur.ID == ix.KeyID() {
			return exitOK, true
		}
		printf(stderr, "%s: %s's catalog is signed with key %s, and --signing-key is key %s: give the catalog's key; "+
			"to move the catalog to a new key, run skilldrop reindex --dir DIR --signing-key FILE; nothing was %s\n",
			name, printable(tg.dir), cur.ID, ix.KeyID(), did)
		return exitUsage, false
	}
	printf(stderr, "%s: %s's catalog is signed (key %s), so it is written only with that key: add --signing-key FILE "+
		"(make run's is .run/signing-key.pem); nothing was %s\n", name, printable(tg.dir), c.Signing.CurrentKey().ID, did)
	return exitUsage, false
}
