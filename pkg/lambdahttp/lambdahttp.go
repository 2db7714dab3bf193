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

// Handle serves one event; pass it to lambda.Start. A malformed event is
// answered 400 rather than failed, so the client sees an HTTP answer; an
// error is returned only when the context ends before the handler answers.
func (a *Adapter) Handle(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	req, err := Request(ctx, ev)
	if err != nil {
		return plainError(http.StatusBadRequest, "bad_request", err.Error()), nil
	}
	w := newResponse(a.bodyBudget())
	a.handler.ServeHTTP(w, req)
	if err := ctx.Err(); err != nil && !w.wroteHeader {
		return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("serve %s %s: %w", req.Method, req.URL.Path, err)
	}
	resp, ok := w.event(req.Method)
	if !ok || resp.encodedSize() > a.maxBytes-responselimit.EnvelopeReserve {
		return plainError(http.StatusBadGateway, "response_too_large", "the response is larger than this deployment can return"), nil
	}
	return resp.APIGatewayV2HTTPResponse, nil
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
		return nil, fmt.Errorf("event path %q: %w", clip(rawPath), err)
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

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
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
	if w.body.Len()+len(p) > w.budget {
		w.overflow = true
		return 0, errResponseTooLarge
	}
	return w.body.Write(p)
}

// Flush is a no-op: a buffered Lambda response leaves only once complete.
func (w *response) Flush() {}

var errResponseTooLarge = errors.New("lambdahttp: response larger than the event response allows")

type eventResponse struct {
	events.APIGatewayV2HTTPResponse
}

// encodedSize is the size of the response as a JSON document, near enough:
// the body as a JSON string plus the headers and cookies.
func (r eventResponse) encodedSize() int {
	n := responselimit.JSONStringLen(r.Body) + 256
	for k, v := range r.Headers {
		n += len(k) + len(v) + 8
	}
	for _, c := range r.Cookies {
		n += len(c) + 4
	}
	return n
}

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
	ev := events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{}}
	for k, vs := range w.header {
		if len(vs) == 0 {
			continue
		}
		if k == "Set-Cookie" {
			ev.Cookies = append(ev.Cookies, vs...)
			continue
		}
		ev.Headers[k] = strings.Join(vs, ", ")
	}
	body := w.body.Bytes()
	if method == http.MethodHead {
		// A handler may write a HEAD body (net/http would discard it); keep
		// the length it announced but send nothing.
		if _, ok := ev.Headers["Content-Length"]; !ok && len(body) > 0 {
			ev.Headers["Content-Length"] = strconv.Itoa(len(body))
		}
		body = nil
	}
	if len(body) > 0 {
		if isText(w.header, body) {
			ev.Body = string(body)
		} else {
			ev.Body = base64.StdEncoding.EncodeToString(body)
			ev.IsBase64Encoded = true
		}
	}
	return eventResponse{ev}, true
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

func plainError(status int, code, msg string) events.APIGatewayV2HTTPResponse {
	type detail struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		Error detail `json:"error"`
	}{detail{code, msg}}) // cannot fail: two strings
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers: map[string]string{
			"Content-Type":  "application/json",
			"Cache-Control": "no-store",
		},
		Body: string(body),
	}
}
