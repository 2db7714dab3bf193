// Package mcpconformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in tools/node and installed by
// `make node-tools`) against `skilldrop serve` on a fixture bucket, and
// fails on every FAILURE it reports except the server-stateless checks
// that need the suite's own diagnostic tools, which a skills server does
// not have (named by check id below, and allowed only while the suite
// says that is why).
//
// The test carries the build tag "conformance" and needs
// SKILLDROP_NODE_TOOLS (the Makefile exports it): `make test-conformance`.
package mcpconformance
