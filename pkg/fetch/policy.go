package fetch

import "net/netip"

// refused are the ranges inside the global unicast space that still do not
// name a host on the public internet: private and shared networks,
// documentation and benchmarking, and the translators and tunnels whose
// address embeds an IPv4 one (NAT64, 6to4, Teredo) and could embed an
// inside one. Loopback, link-local, multicast, unspecified and broadcast are
// outside global unicast and refused before this list is read; they are
// listed too so the list alone states the policy.
var refused = prefixes(
	"0.0.0.0/8",       // "this network"
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // shared (carrier-grade NAT)
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local (cloud metadata lives here)
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and the broadcast address
	"::/96",           // unspecified, loopback, IPv4-compatible
	"64:ff9b::/96",    // NAT64
	"64:ff9b:1::/48",  // local-use NAT64
	"100::/64",        // discard-only
	"2001::/23",       // IETF protocol assignments (Teredo, benchmarking, ORCHID)
	"2001:db8::/32",   // documentation
	"2002::/16",       // 6to4
	"3fff::/20",       // documentation
	"fc00::/7",        // unique local (private)
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
)

// globalV6 is the only IPv6 space allocated for global unicast.
var globalV6 = netip.MustParsePrefix("2000::/3")

// Public reports whether a is a global unicast address a fetch may connect
// to. An IPv4-mapped IPv6 address is judged as the IPv4 address it maps;
// an address with a zone is link-scoped and refused.
func Public(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsValid() || a.Zone() != "" || !a.IsGlobalUnicast() {
		return false
	}
	if a.Is6() && !globalV6.Contains(a) {
		return false
	}
	for _, p := range refused {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}
