// Package config holds the service's configuration data files. The loading
// code lives in platform/config; this package only embeds the defaults so the
// binary runs from any working directory.
package config

import _ "embed"

// Defaults is the built-in configuration, the lowest layer of every load.
//
//go:embed defaults.yaml
var Defaults []byte

// AuthzModel is the Casbin model of the role × menu × action matrix.
//
//go:embed authz_model.conf
var AuthzModel string
