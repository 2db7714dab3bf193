// Package dirwatch reports which keys of a directory laid out like the
// bucket (the layout store.Dir reads: the key "skills/x.md" is the file
// <root>/skills/x.md, and names starting with "." are not keys) change,
// from filesystem notifications rather than by listing the tree, so that a
// local server at tens of thousands of skills notices a copied-in file at
// once and costs nothing while nothing changes.
//
// Notifications are inotify's on Linux (through fsnotify): one watch per
// directory under the watched prefixes, added as directories appear.
// Bursts are coalesced into one Batch. When notifications may have been
// lost (the kernel's queue overflowed, a directory moved away, a watch
// could not be added), the Batch says so and the caller lists everything.
package dirwatch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Defaults of Options.
const (
	DefaultQuiet    = 150 * time.Millisecond
	DefaultMaxDelay = time.Second
)

// ErrUnwatched is wrapped by the error of a Batch when a new directory
// could not be watched (the inotify watch limit, fs.inotify.max_user_watches,
// is the usual cause): changes below it go unreported from then on.
var ErrUnwatched = errors.New("dirwatch: a directory could not be watched")

// Options configure a Watcher.
type Options struct {
	// Prefixes are the key prefixes to watch: "skills/" watches the
	// directory skills/ and everything below it; a prefix without a
	// trailing slash ("agent-skills.yaml") is one key in the root.
	Prefixes []string
	// A batch is handed over once no change came for Quiet, or MaxDelay
	// after its first change while changes keep coming (<= 0: the defaults).
	Quiet, MaxDelay time.Duration
}

// Batch is what changed since the previous batch.
type Batch struct {
	// Keys may have changed (appeared, been written or removed), sorted.
	Keys []string
	// Resync is set when changes may have gone unreported: list every key.
	Resync bool
	// Err says why, when an error caused the Resync.
	Err error
}

// Watcher watches a directory; see the package documentation.
type Watcher struct {
	root     string
	dirs     []string // top-level directories watched recursively ("skills")
	files    []string // keys in the root ("agent-skills.yaml")
	quiet    time.Duration
	maxDelay time.Duration
	fs       *fsnotify.Watcher
	add      func(path string) error // fs.Add, but in tests
	out      chan Batch
	done     chan struct{}
	closed   sync.Once
	stopped  chan struct{}

	// Owned by the loop goroutine after New returns.
	watched map[string]bool // directories with a watch, by path
	pending pending
}

// New starts watching root. The watches are in place when it returns:
// every change after that is reported.
func New(root string, opts Options) (*Watcher, error) { return newWatcher(root, opts, nil) }

// newWatcher is New with add in place of fsnotify's Add (nil: that).
func newWatcher(root string, opts Options, add func(fw *fsnotify.Watcher, path string) error) (*Watcher, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("dirwatch: %w", err)
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("dirwatch: %w", err)
	}
	w := &Watcher{
		root: abs, quiet: opts.Quiet, maxDelay: opts.MaxDelay, fs: fw, add: fw.Add,
		out: make(chan Batch), done: make(chan struct{}), stopped: make(chan struct{}),
		watched: map[string]bool{},
	}
	if add != nil {
		w.add = func(p string) error { return add(fw, p) }
	}
	if w.quiet <= 0 {
		w.quiet = DefaultQuiet
	}
	if w.maxDelay <= 0 {
		w.maxDelay = DefaultMaxDelay
	}
	for _, p := range opts.Prefixes {
		if dir, ok := strings.CutSuffix(p, "/"); ok {
			w.dirs = append(w.dirs, dir)
		} else {
			w.files = append(w.files, p)
		}
	}
	if err := fw.Add(abs); err != nil {
		_ = fw.Close()
		return nil, fmt.Errorf("dirwatch: watch %s: %w", abs, err)
	}
	for _, dir := range w.dirs {
		if _, err := w.addTree(filepath.Join(abs, dir)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			_ = fw.Close()
			return nil, fmt.Errorf("dirwatch: %w", err)
		}
	}
	go w.loop()
	return w, nil
}

// Batches delivers the batches. It is closed when the Watcher is.
func (w *Watcher) Batches() <-chan Batch { return w.out }

// Close stops watching and closes Batches.
func (w *Watcher) Close() error {
	var err error
	w.closed.Do(func() {
		close(w.done)
		<-w.stopped
		err = w.fs.Close()
	})
	return err
}

// loop gathers events into the pending batch and hands it over when due,
// still gathering while the receiver is busy.
func (w *Watcher) loop() {
	defer close(w.stopped)
	defer close(w.out)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	var (
		send  chan<- Batch // w.out when a batch is due, else nil
		ready Batch
	)
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fs.Events:
			if !ok {
				return
			}
			w.handle(ev, time.Now())
		case err, ok := <-w.fs.Errors:
			if !ok {
				return
			}
			w.pending.resync(fmt.Errorf("dirwatch: %w", err), time.Now())
		case <-timer.C:
		case send <- ready:
			send = nil
			w.pending.clear()
		}
		if w.pending.empty() {
			continue
		}
		now := time.Now()
		if due := w.pending.due(w.quiet, w.maxDelay); now.Before(due) {
			timer.Reset(due.Sub(now))
			send = nil
			continue
		}
		send, ready = w.out, w.pending.batch()
	}
}

// handle records what one event means in keys.
func (w *Watcher) handle(ev fsnotify.Event, now time.Time) {
	rel, err := filepath.Rel(w.root, ev.Name)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return
	}
	key := filepath.ToSlash(rel)
	if hidden(key) || !w.covers(key) {
		return
	}
	switch {
	case ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename):
		if w.forget(ev.Name) {
			// A directory went away with keys below it that no event
			// names, and watches below it that no longer mean their path.
			w.pending.resync(nil, now)
			return
		}
	case ev.Has(fsnotify.Create):
		if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
			// Files may have landed in it before its watch was added.
			keys, err := w.addTree(ev.Name)
			for _, k := range keys {
				w.pending.add(k, now)
			}
			if err != nil {
				w.pending.resync(err, now)
			}
			return
		}
	}
	if !slices.Contains(w.dirs, key) {
		w.pending.add(key, now)
	}
}

// covers reports whether key is in a watched prefix, or is the directory
// of one.
func (w *Watcher) covers(key string) bool {
	if slices.Contains(w.files, key) {
		return true
	}
	top, _, _ := strings.Cut(key, "/")
	return slices.Contains(w.dirs, top)
}

// hidden reports whether a path element of key starts with ".": the
// store's own files and an operator's dot-files, which are not keys.
func hidden(key string) bool {
	for elem := range strings.SplitSeq(key, "/") {
		if strings.HasPrefix(elem, ".") {
			return true
		}
	}
	return false
}

// addTree watches dir and every directory below it (but dot-directories)
// and returns the keys of the files found there.
func (w *Watcher) addTree(dir string) ([]string, error) {
	var keys []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != dir {
				return nil // gone meanwhile
			}
			return err
		}
		if p != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			if rel, err := filepath.Rel(w.root, p); err == nil {
				keys = append(keys, filepath.ToSlash(rel))
			}
			return nil
		}
		if w.watched[p] {
			return nil
		}
		if err := w.add(p); err != nil {
			return fmt.Errorf("%w: %s: %w", ErrUnwatched, p, err)
		}
		w.watched[p] = true
		return nil
	})
	return keys, err
}

// forget drops the watches of dir and below, reporting whether dir was a
// watched directory.
func (w *Watcher) forget(dir string) bool {
	if !w.watched[dir] {
		return false
	}
	for p := range w.watched {
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			_ = w.fs.Remove(p) // already gone with the directory, mostly
			delete(w.watched, p)
		}
	}
	return true
}
