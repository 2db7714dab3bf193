package scan

// Reference is p as the tests compare it with: each window's requires
// looked for in it alone, and no matcher's needs (needsOf) looked for at
// all; what p finds, it finds.
func Reference(p *Pack) *Pack {
	r := *p
	r.reference = true
	return &r
}
