// Package config holds the service's configuration data files. The loading
// code lives in platform/config; this package only embeds the defaults so the
// binary runs from any working directory.
package config

import _ "embed"

// Defaults is the built-in configuration, the lowest layer of every load.
//
//go:embed defaults.yaml
var Defaults []byte
