package dirwatch

import (
	"maps"
	"slices"
	"time"
)

// pending is the batch being gathered: the keys changed and whether to
// resync, with when its first and latest changes came.
type pending struct {
	keys        map[string]bool
	resyncs     bool
	err         error
	first, last time.Time
}

func (p *pending) add(key string, now time.Time) {
	if p.keys == nil {
		p.keys = map[string]bool{}
	}
	p.keys[key] = true
	p.touch(now)
}

// resync records that everything must be listed; err is kept if it is the
// first reason given.
func (p *pending) resync(err error, now time.Time) {
	p.resyncs = true
	if p.err == nil {
		p.err = err
	}
	p.touch(now)
}

func (p *pending) touch(now time.Time) {
	if p.first.IsZero() {
		p.first = now
	}
	p.last = now
}

func (p *pending) empty() bool { return p.first.IsZero() }

// due is when the batch is handed over: quiet after its latest change, but
// no later than maxDelay after its first.
func (p *pending) due(quiet, maxDelay time.Duration) time.Time {
	d := p.last.Add(quiet)
	if limit := p.first.Add(maxDelay); limit.Before(d) {
		return limit
	}
	return d
}

func (p *pending) batch() Batch {
	return Batch{Keys: slices.Sorted(maps.Keys(p.keys)), Resync: p.resyncs, Err: p.err}
}

func (p *pending) clear() { *p = pending{} }
