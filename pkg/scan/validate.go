package scan

import (
	"bytes"
	"encoding/base64"
	"hash/crc32"
)

// Validators: checks a pattern's match must pass too, so that documented
// placeholders and look-alikes are not reported as secrets. Each gets the
// view's text and the match's bounds.

// notExample refuses AWS's documentation keys (…EXAMPLE, …EXAMPLEKEY).
func notExample(t []byte, start, end int) bool {
	return !bytes.Contains(bytes.ToUpper(t[start:end]), []byte("EXAMPLE"))
}

// pemBody accepts a private key header followed by a body that decodes to
// a plausible key of at least 40 bytes (an Ed25519 PKCS #8 key is 48): DER
// (an ASN.1 SEQUENCE), an OpenSSH key, or an armored PGP key.
func pemBody(t []byte, _, end int) bool {
	rest := t[end:]
	stop := bytes.Index(rest, []byte("-----END"))
	if stop < 0 {
		return false
	}
	var body []byte
	for _, line := range bytes.Split(rest[:stop], []byte{'\n'}) {
		line = bytes.TrimSpace(line)
		if bytes.IndexByte(line, ':') >= 0 { // armor headers (Proc-Type, Version)
			continue
		}
		body = append(body, line...)
	}
	if i := bytes.IndexByte(body, '='); i >= 0 && bytes.HasPrefix(t[end-len(" BLOCK-----"):end], []byte(" BLOCK-----")) {
		body = body[:i] // a PGP block's checksum line follows the '='
	}
	der, err := base64.StdEncoding.DecodeString(string(body))
	if err != nil {
		der, err = base64.RawStdEncoding.DecodeString(string(bytes.TrimRight(body, "=")))
	}
	if err != nil || len(der) < 40 {
		return false
	}
	return der[0] == 0x30 || bytes.HasPrefix(der, []byte("openssh-key-v1\x00")) || der[0]&0x80 != 0
}

// githubChecksum checks the CRC-32 a GitHub token ends with: the last six
// characters are the base62 CRC-32 of the thirty before them. Fine-grained
// tokens (github_pat_) carry no public checksum and pass.
func githubChecksum(t []byte, start, end int) bool {
	tok := t[start:end]
	if bytes.HasPrefix(tok, []byte("github_pat_")) {
		return true
	}
	i := bytes.IndexByte(tok, '_')
	if i < 0 || len(tok)-i-1 != 36 {
		return false
	}
	random, sum := tok[i+1:len(tok)-6], tok[len(tok)-6:]
	return string(sum) == base62CRC(random)
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// base62CRC is the CRC-32 of b in base62, padded to six characters.
func base62CRC(b []byte) string {
	n := crc32.ChecksumIEEE(b)
	out := []byte("000000")
	for i := 5; i >= 0 && n > 0; i-- {
		out[i] = base62[n%62]
		n /= 62
	}
	return string(out)
}
