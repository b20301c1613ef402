// Command gen writes the contract templates the forms module seeds: one
// Word document per contract type and the Excel price schedule, into the
// folder given by -out (default: the parent folder, seeds/templates).
//
//	go generate ./seeds/templates      (or: go run ./seeds/templates/gen)
//
// The documents are plain OOXML written by hand rather than by a library, so
// every placeholder sits exactly where a person editing in Word would put it,
// including one per document deliberately split across runs the way Word
// splits text it has spell-checked or re-typed. Output is deterministic:
// running the program twice gives the same bytes.
package main

import (
	"archive/zip"
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// stamp is the modification time written into every zip entry, so the
// output does not change between runs.
var stamp = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func main() {
	out := flag.String("out", "", "output folder (default: seeds/templates, found from the working directory)")
	flag.Parse()
	dir := *out
	if dir == "" {
		dir = defaultDir()
	}
	for _, c := range contracts {
		data, err := buildDocx(c)
		if err != nil {
			log.Fatalf("%s: %v", c.File, err)
		}
		write(filepath.Join(dir, c.File), data)
	}
	data, err := buildPriceSchedule()
	if err != nil {
		log.Fatalf("%s: %v", priceScheduleFile, err)
	}
	write(filepath.Join(dir, priceScheduleFile), data)
}

// defaultDir finds seeds/templates whether the program runs from the
// repository root (go run) or from seeds/templates (go generate).
func defaultDir() string {
	for _, d := range []string{"seeds/templates", "."} {
		if _, err := os.Stat(filepath.Join(d, "embed.go")); err == nil {
			return d
		}
	}
	log.Fatal("cannot find seeds/templates; pass -out")
	return ""
}

func write(path string, data []byte) {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("wrote %s (%d bytes)\n", path, len(data))
}

// zipParts writes parts, in order, as a zip archive.
func zipParts(parts [][2]string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range parts {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p[0], Method: zip.Deflate, Modified: stamp})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(p[1])); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// xmlEscape escapes text for element content and attribute values.
func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
