//go:build !linux

package exepages

// Release does nothing where the executable's pages are not Linux's to drop.
func Release() error { return nil }
