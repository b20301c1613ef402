package cli

import (
	"context"
	"io"

	"github.com/contractflow/contractflow/platform/kernel"
)

func backupCommand(ctx context.Context, opts kernel.Options, args []string, out io.Writer) error {
	return errUsage
}

func restoreCommand(opts kernel.Options, args []string, out io.Writer) error {
	return errUsage
}
