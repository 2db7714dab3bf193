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
// JSON.parse merges a member given twice (the last wins) and reads invalid
// UTF-8 as U+FFFD, so text that has no canonical form would verify under
// the signature of another text: the file is read strictly first (UTF-8
// that decodes, no member name twice in an object, no lone surrogate
// escape), and refused otherwise, as skilldrop's own verifier refuses it.
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
// strictJSON returns text's value after checking what JSON.parse lets
// through: a member name given twice in one object (compared as decoded)
// and a \uD800-\uDFFF escape that is not half of a pair.
function strictJSON(text) {
  let i = 0;
  const fail = (why) => {
    throw new Error(`not canonical JSON at offset ${i}: ${why}`);
  };
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const string = () => {
    i++; // the opening quote
    let out = "";
    for (;;) {
      if (i >= text.length) fail("an unterminated string");
      const ch = text[i];
      if (ch === '"') {
        i++;
        break;
      }
      if (ch !== "\\") {
        out += ch;
        i++;
        continue;
      }
      const esc = text[i + 1];
      if (esc !== "u") {
        out += { b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }[esc] ?? esc;
        i += 2;
        continue;
      }
      const unit = parseInt(text.slice(i + 2, i + 6), 16);
      if (Number.isNaN(unit)) fail("a malformed \\u escape");
      i += 6;
      if (unit >= 0xd800 && unit <= 0xdbff) {
        const low = text.slice(i, i + 2) === "\\u" ? parseInt(text.slice(i + 2, i + 6), 16) : NaN;
        if (!(low >= 0xdc00 && low <= 0xdfff)) fail("a lone surrogate escape");
        out += String.fromCharCode(unit, low);
        i += 6;
      } else if (unit >= 0xdc00 && unit <= 0xdfff) {
        fail("a lone surrogate escape");
      } else {
        out += String.fromCharCode(unit);
      }
    }
    return out;
  };
  const value = () => {
    ws();
    if (text[i] === "{") {
      i++;
      const names = new Set();
      ws();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail("a member name expected");
        const name = string();
        if (names.has(name)) fail(`the member ${JSON.stringify(name)} is given twice`);
        names.add(name);
        ws();
        if (text[i++] !== ":") fail("':' expected");
        value();
        ws();
        const c = text[i++];
        if (c === "}") return;
        if (c !== ",") fail("',' or '}' expected");
      }
    } else if (text[i] === "[") {
      i++;
      ws();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        const c = text[i++];
        if (c === "]") return;
        if (c !== ",") fail("',' or ']' expected");
      }
    } else if (text[i] === '"') {
      string();
    } else {
      // A number, true, false or null: JSON.parse judges its form.
      while (i < text.length && !",]} \t\n\r".includes(text[i])) i++;
    }
  };
  value();
  ws();
  if (i !== text.length) fail("text after the document");
  return JSON.parse(text); // what is not well formed it still refuses
}

try {
  let text;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(readFileSync(catalogPath));
  } catch {
    throw new Error("the catalog is not valid UTF-8");
  }
  const doc = strictJSON(text);
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
