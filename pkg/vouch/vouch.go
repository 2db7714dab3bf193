// Package vouch carries, in a request's context, what the platform in front
// of an http.Handler vouches for about the request: its id for the request
// and the domain the client addressed. Only the code that builds the
// request (an adapter such as pkg/lambdahttp) can set them, so no client
// header can forge either; the handler needs to know nothing else about
// the platform.
package vouch

import "context"

// Facts is what the platform vouches for. A zero field is not known.
type Facts struct {
	// RequestID is the platform's id of the request (API Gateway's
	// requestContext.requestId): the handler answers and logs under it.
	RequestID string
	// Domain is the host the client addressed, as the platform received it
	// (API Gateway's requestContext.domainName: the execute-api domain or a
	// custom domain); the public origin is https://Domain.
	Domain string
}

type key struct{}

// NewContext returns ctx carrying f.
func NewContext(ctx context.Context, f Facts) context.Context {
	return context.WithValue(ctx, key{}, f)
}

// FromContext returns the facts ctx carries; ok is false when the request
// came through no such platform (local serving, tests).
func FromContext(ctx context.Context) (f Facts, ok bool) {
	f, ok = ctx.Value(key{}).(Facts)
	return f, ok
}
