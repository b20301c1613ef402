// Command contractflow is the ContractFlow service: one binary holding every
// module, configured by files and CONTRACTFLOW_* variables.
package main

import (
	"os"

	"github.com/contractflow/contractflow/platform/cli"

	_ "github.com/contractflow/contractflow/modules/all"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
