// Package all is the distribution: importing it compiles in every module,
// each of which registers itself with the kernel from init().
package all

import (
	_ "github.com/contractflow/contractflow/modules/budget"
	_ "github.com/contractflow/contractflow/modules/contracts"
	_ "github.com/contractflow/contractflow/modules/forms"
	_ "github.com/contractflow/contractflow/modules/identity"
	_ "github.com/contractflow/contractflow/modules/masterdata"
	_ "github.com/contractflow/contractflow/modules/notifications"
	_ "github.com/contractflow/contractflow/modules/procurement"
	_ "github.com/contractflow/contractflow/modules/reports"
	_ "github.com/contractflow/contractflow/modules/workflowdesigner"
)
