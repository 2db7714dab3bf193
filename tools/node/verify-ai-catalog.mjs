// verify-ai-catalog.mjs CATALOG.json KEY.pem [DID.json ORIGIN]
//
// Verifies an AI Catalog's catalog-level signature the way the AI Catalog
// format defines it, with libraries skilldrop's Go code shares nothing
// with: the document without its "signature" member, canonicalized by
// canonicalize (RFC 8785), is the detached payload of the compact JWS in
// "signature", checked by jose with the PEM public key (SPKI), ES256 only.
// With a DID document and its origin, it also checks that the JWS's kid is
// a verification method of that document holding the same key.
//
// Prints "verified <kid>" and exits 0, or prints why not and exits 1.
import { readFileSync } from "node:fs";
import canonicalize from "canonicalize";
import * as jose from "jose";

const [catalogPath, keyPath, didPath, origin] = process.argv.slice(2);
if (!catalogPath || !keyPath) {
  console.error("usage: verify-ai-catalog.mjs CATALOG.json KEY.pem [DID.json ORIGIN]");
  process.exit(2);
}
try {
  const doc = JSON.parse(readFileSync(catalogPath, "utf8"));
  const jws = doc.signature;
  if (typeof jws !== "string") throw new Error("no signature member");
  delete doc.signature;
  const payload = new TextEncoder().encode(canonicalize(doc));
  const [protectedHeader, detached, signature] = jws.split(".");
  if (detached !== "") throw new Error("the JWS is not detached");
  const key = await jose.importSPKI(readFileSync(keyPath, "utf8"), "ES256");
  const { protectedHeader: header } = await jose.flattenedVerify(
    { protected: protectedHeader, payload: jose.base64url.encode(payload), signature },
    key,
    { algorithms: ["ES256"] },
  );
  if (didPath) {
    const did = JSON.parse(readFileSync(didPath, "utf8"));
    const want = "did:web:" + new URL(origin).host.replaceAll(":", "%3A");
    if (did.id !== want) throw new Error(`the DID document is ${did.id}, want ${want}`);
    const vm = (did.verificationMethod || []).find((m) => m.id === header.kid);
    if (!vm) throw new Error(`kid ${header.kid} is not a verification method of ${did.id}`);
    const fromDID = await jose.exportSPKI(await jose.importJWK(vm.publicKeyJwk, "ES256"));
    const fromPEM = await jose.exportSPKI(key);
    if (fromDID !== fromPEM) throw new Error(`${header.kid} is another key than the PEM`);
  }
  console.log(`verified ${header.kid}`);
} catch (e) {
  console.log(`not verified: ${e.message}`);
  process.exit(1);
}
