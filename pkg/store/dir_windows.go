//go:build windows

package store

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// fileIdentity leaves id as it is: os.FileInfo carries no file index on
// Windows, so a file's ETag is derived from its size and modification time
// alone (NTFS keeps them to 100 ns, and every Put renames a new file into
// place).
func fileIdentity(fs.FileInfo, []byte) {}

// lockFile takes an exclusive lock on the first byte of f, waiting for it.
func lockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, &ol)
}

// unlockFile releases lockFile's lock.
func unlockFile(f *os.File) error {
	var ol windows.Overlapped
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}
