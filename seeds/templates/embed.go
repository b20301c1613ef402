// Package templates ships the contract template files the forms module
// seeds: one Word document per contract type and the Excel price schedule.
// They are embedded in the binary so the service can copy them into blob
// storage from any working directory. The files are generated; edit the
// program in gen/ and run go generate, never the files by hand.
package templates

import "embed"

//go:generate go run ./gen -out .

// Files holds the template files by name, e.g. "HDTP-01.docx".
//
//go:embed *.docx *.xlsx
var Files embed.FS
