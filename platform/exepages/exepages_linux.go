package exepages

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Release writes back the executable's file (a binary copied or built
// moments ago may still have dirty pages, which the kernel does not drop),
// then, for each read-only mapping of it (code and constant data), turns
// read-ahead off (MADV_RANDOM: a later fault reads one page, not a large
// folio) and drops its pages (MADV_PAGEOUT). Pages another process also
// maps (the hashing child, a second instance) stay.
func Release() error {
	exe, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	defer exe.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(exe.Fd()), &st); err != nil {
		return err
	}
	if err := exe.Sync(); err != nil {
		return fmt.Errorf("writing back the executable: %w", err)
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return err
	}
	dev := fmt.Sprintf("%02x:%02x", unix.Major(st.Dev), unix.Minor(st.Dev))
	ino := strconv.FormatUint(st.Ino, 10)
	sc := bufio.NewScanner(bytes.NewReader(maps))
	for sc.Scan() {
		// start-end perms offset dev inode path
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[3] != dev || f[4] != ino || strings.Contains(f[1], "w") {
			continue
		}
		lo, hi, _ := strings.Cut(f[0], "-")
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("reading /proc/self/maps: %q", sc.Text())
		}
		for _, advice := range []uintptr{unix.MADV_RANDOM, unix.MADV_PAGEOUT} {
			if _, _, e := unix.Syscall(unix.SYS_MADVISE, uintptr(start), uintptr(end-start), advice); e != 0 {
				return fmt.Errorf("madvise %s: %w", f[0], e)
			}
		}
	}
	return sc.Err()
}
