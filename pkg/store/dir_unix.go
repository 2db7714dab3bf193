//go:build unix

package store

import (
	"encoding/binary"
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// fileIdentity writes the device and inode of fi into id (16 bytes).
func fileIdentity(fi fs.FileInfo, id []byte) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		binary.LittleEndian.PutUint64(id[0:], uint64(st.Dev)) //nolint:gosec,unconvert // bits, not arithmetic
		binary.LittleEndian.PutUint64(id[8:], st.Ino)
	}
}

// lockFile takes an exclusive flock on f, waiting for it.
func lockFile(f *os.File) error { return flock(f, syscall.LOCK_EX) }

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) error { return flock(f, syscall.LOCK_UN) }

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Flock(int(fd), how)
			if !errors.Is(ferr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}
