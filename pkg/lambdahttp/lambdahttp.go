// Package lambdahttp serves an http.Handler behind an API Gateway HTTP API
// (payload format 2.0): it turns the event into an *http.Request, runs the
// handler against a bounded in-memory response, and turns that into the
// event response, base64-encoding every body that is not plain text.
//
// What API Gateway itself vouches for (the domain the client addressed, its
// request id) travels in the request's context as vouch.Facts, never in a
// header, so a client cannot forge it by sending one, and the handler learns
// it without knowing API Gateway.
package lambdahttp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/skilldrop/skilldrop/pkg/routes"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/skilldrop/skilldrop/pkg/responselimit"
	"github.com/skilldrop/skilldrop/pkg/vouch"
)

// Adapter serves an http.Handler as an API Gateway HTTP API (payload 2.0)
// Lambda handler. It is safe for concurrent use.
type Adapter struct {
	handler  http.Handler
	maxBytes int
}

// Option configures an Adapter.
type Option func(*Adapter)

// WithMaxResponseBytes sets the bound of an encoded event response
// (responselimit.MaxBytes when n <= 0).
func WithMaxResponseBytes(n int) Option {
	return func(a *Adapter) {
		if n > 0 {
			a.maxBytes = n
		}
	}
}

// New returns an Adapter serving h.
func New(h http.Handler, opts ...Option) *Adapter {
	a := &Adapter{handler: h, maxBytes: responselimit.MaxBytes}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Invoke serves one event as the Lambda runtime hands it over, a JSON
// payload, and answers the event response's JSON: pass the Adapter to
// lambda.Start (it is a lambda.Handler). The envelope is written here in
// one pass over the body, and its length is what the bound checks,
// rather than through aws-lambda-go's reflection and encoding/json, which
// copy a document of megabytes into a string and escape it again, on a
// cold start's fresh heap.
func (a *Adapter) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var ev events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("lambdahttp: the payload is not an API Gateway HTTP API event: %w", err)
	}
	resp, err := a.serve(ctx, ev)
	if err != nil {
		return nil, err
	}
	out := resp.appendJSON(make([]byte, 0, len(resp.body)+len(resp.body)/8+1024))
	if !a.fits(len(out)) {
		out = tooLarge().appendJSON(out[:0])
	}
	return out, nil
}

// Handle serves one event and returns the event response as aws-lambda-go's
// type. A malformed event is answered 400 rather than failed, so the client
// sees an HTTP answer; an error is returned only when the context ends
// before the handler answers.
func (a *Adapter) Handle(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	resp, err := a.serve(ctx, ev)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{}, err
	}
	if !a.fits(resp.encodedSize()) {
		resp = tooLarge()
	}
	return resp.typed(), nil
}

// serve is what Handle and Invoke share: the handler's answer to ev, the
// 400 of a malformed event, or the 502 of a body past the budget.
func (a *Adapter) serve(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (eventResponse, error) {
	req, err := Request(ctx, ev)
	if err != nil {
		return plainError(http.StatusBadRequest, "bad_request", err.Error()), nil
	}
	w := newResponse(a.bodyBudget())
	a.handler.ServeHTTP(w, req)
	if err := ctx.Err(); err != nil && !w.wroteHeader {
		return eventResponse{}, fmt.Errorf("serve %s %s: %w", req.Method, routes.RedactCapability(req.URL.Path, ""), err) // never a capability URL's key
	}
	resp, ok := w.event(req.Method)
	if !ok {
		return tooLarge(), nil
	}
	return resp, nil
}

// fits reports whether an event response of n bytes is one this
// deployment can return.
func (a *Adapter) fits(n int) bool { return n <= a.maxBytes-responselimit.EnvelopeReserve }

// tooLarge is the answer in place of one the platform cannot return.
func tooLarge() eventResponse {
	return plainError(http.StatusBadGateway, "response_too_large", "the response is larger than this deployment can return")
}

// Fits reports whether a response with these headers and body fits an
// event response of responselimit.MaxBytes, encoded as Handle encodes it (text
// as a JSON string, anything else in base64).
func Fits(h http.Header, body []byte) bool {
	w := &response{header: h, body: *bytes.NewBuffer(body), wroteHeader: true, status: http.StatusOK}
	resp, _ := w.event(http.MethodGet)
	return resp.encodedSize() <= responselimit.MaxEncodedBody
}

// bodyBudget is the most body bytes worth buffering: anything larger could
// never be returned, whatever its encoding.
func (a *Adapter) bodyBudget() int {
	return max(0, a.maxBytes-responselimit.EnvelopeReserve)
}

// Request converts an event into the request a handler sees: method, path
// and raw query, headers (cookies as one Cookie header), the decoded body,
// Host, RemoteAddr (the source IP API Gateway saw), and a context carrying
// the vouch.Facts of the request context (its request id and domain name).
//
// HTTP APIs deliver rawPath percent-decoded while other integrations keep
// it encoded; the path is taken as a request-target and only characters
// that cannot appear in an encoded path are escaped first, so both parse
// the way a Go server would parse the request line.
func Request(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (*http.Request, error) {
	method := ev.RequestContext.HTTP.Method
	if method == "" {
		return nil, errors.New("event has no requestContext.http.method")
	}
	rawPath := ev.RawPath
	if rawPath == "" {
		rawPath = "/"
	}
	target := escapeTarget(rawPath)
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	u, err := url.ParseRequestURI(target)
	if err != nil {
		// Neither the path nor url's error (which quotes it) is repeated: it
		// may hold a capability URL's key.
		return nil, errors.New("event path: not a request target (a path starting with /)")
	}
	var body []byte
	if ev.Body != "" {
		if ev.IsBase64Encoded {
			body, err = base64.StdEncoding.DecodeString(ev.Body)
			if err != nil {
				return nil, fmt.Errorf("event body: %w", err)
			}
		} else {
			body = []byte(ev.Body)
		}
	}
	facts := vouch.Facts{RequestID: ev.RequestContext.RequestID, Domain: ev.RequestContext.DomainName}
	req, err := http.NewRequestWithContext(vouch.NewContext(ctx, facts), method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("event request: %w", err)
	}
	req.URL = u
	req.RequestURI = target
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	if len(ev.Cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
	}
	req.Host = req.Header.Get("Host")
	if req.Host == "" {
		req.Host = facts.Domain
	}
	req.Header.Del("Host") // net/http keeps Host only in req.Host
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	if p := ev.RequestContext.HTTP.Protocol; p != "" {
		if major, minor, ok := http.ParseHTTPVersion(p); ok {
			req.Proto, req.ProtoMajor, req.ProtoMinor = p, major, minor
		}
	}
	req.RemoteAddr = ev.RequestContext.HTTP.SourceIP
	return req, nil
}

// escapeTarget percent-encodes the bytes that can never appear literally in
// an encoded path (controls, space, '?', '#', non-ASCII, a '%' that starts
// no escape), leaving valid escapes and everything else as they are.
func escapeTarget(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			b.WriteByte(c)
		case c <= ' ' || c >= 0x7f || c == '?' || c == '#' || c == '%' || c == '"' || c == '<' || c == '>' || c == '`' || c == '{' || c == '}' || c == '|' || c == '\\' || c == '^':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// response is a bounded, buffered http.ResponseWriter.
type response struct {
	header      http.Header
	status      int
	wroteHeader bool
	body        bytes.Buffer
	budget      int
	overflow    bool
}

func newResponse(budget int) *response {
	return &response{header: http.Header{}, budget: budget}
}

func (w *response) Header() http.Header { return w.header }

func (w *response) WriteHeader(status int) {
	if w.wroteHeader {
		return
	}
	w.status, w.wroteHeader = status, true
}

func (w *response) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.body.Cap() == 0 {
		// One buffer for a body whose length was announced, not one per
		// doubling as the writes come.
		if n, err := strconv.Atoi(w.header.Get("Content-Length")); err == nil && n > len(p) && n <= w.budget {
			w.body.Grow(n)
		}
	}
	if w.body.Len()+len(p) > w.budget {
		w.overflow = true
		return 0, errResponseTooLarge
	}
	return w.body.Write(p)
}

// Flush is a no-op: a buffered Lambda response leaves only once complete.
func (w *response) Flush() {}

var errResponseTooLarge = errors.New("lambdahttp: response larger than the event response allows")

// event converts the recorded response. Multi-valued headers are joined
// with ", " (payload 2.0 has no multi-value headers); Set-Cookie becomes
// the cookies list, since cookie values may themselves contain commas.
// ok is false when the handler wrote more than the body budget.
func (w *response) event(method string) (resp eventResponse, ok bool) {
	if w.overflow {
		return eventResponse{}, false
	}
	status := w.status
	if !w.wroteHeader {
		status = http.StatusOK
	}
	ev := eventResponse{status: status, headers: map[string]string{}}
	for k, vs := range w.header {
		if len(vs) == 0 {
			continue
		}
		if k == "Set-Cookie" {
			ev.cookies = append(ev.cookies, vs...)
			continue
		}
		ev.headers[k] = strings.Join(vs, ", ")
	}
	body := w.body.Bytes()
	if method == http.MethodHead {
		// A handler may write a HEAD body (net/http would discard it); keep
		// the length it announced but send nothing.
		if _, ok := ev.headers["Content-Length"]; !ok && len(body) > 0 {
			ev.headers["Content-Length"] = strconv.Itoa(len(body))
		}
		body = nil
	}
	if len(body) > 0 {
		ev.body, ev.base64 = body, !isText(w.header, body)
	}
	return ev, true
}

// isText reports whether a body can travel as a JSON string unchanged:
// a textual media type, no content coding, and valid UTF-8. Everything
// else (archives, gzip-encoded JSON, unknown types) is base64-encoded.
func isText(h http.Header, body []byte) bool {
	if ce := h.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return false
	}
	ct := h.Get("Content-Type")
	if ct == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	textual := strings.HasPrefix(mt, "text/") ||
		mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/xml" || strings.HasSuffix(mt, "+xml") ||
		mt == "application/javascript" || mt == "application/x-www-form-urlencoded"
	return textual && utf8.Valid(body)
}

func plainError(status int, code, msg string) eventResponse {
	type detail struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		Error detail `json:"error"`
	}{detail{code, msg}}) // cannot fail: two strings
	return eventResponse{
		status: status,
		headers: map[string]string{
			"Content-Type":  "application/json",
			"Cache-Control": "no-store",
		},
		body: body,
	}
}
