// Package all is the distribution: importing it compiles in every module,
// each of which registers itself with the kernel from init().
package all

import (
	_ "github.com/contractflow/contractflow/modules/identity"
)
