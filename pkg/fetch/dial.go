package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
)

// errRefusedAddress is the policy's refusal of one resolved address.
var errRefusedAddress = errors.New("not a public address")

// dialer connects only to addresses the policy allows. It resolves the
// name itself and dials the checked IP, so the address checked is the
// address connected to: a second lookup (DNS rebinding) cannot slip in.
type dialer struct {
	resolver Resolver
	allow    []netip.AddrPort // Options.AllowForTests
	net      net.Dialer
}

// DialContext is http.Transport's DialContext.
func (d *dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, p, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", address, err)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: port: %w", address, err)
	}
	addrs, err := d.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a.Unmap(), uint16(port))
		if !d.permits(ap) {
			errs = append(errs, fmt.Errorf("dial %s (%s): %w", address, ap, errRefusedAddress))
			continue
		}
		c, err := d.net.DialContext(ctx, network, ap.String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("dial %s: no address", address)
	}
	return nil, errors.Join(errs...)
}

// resolve returns host's addresses: itself when it is an IP literal.
func (d *dialer) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := d.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	return addrs, nil
}

func (d *dialer) permits(ap netip.AddrPort) bool {
	return Public(ap.Addr()) || slices.Contains(d.allow, ap)
}
