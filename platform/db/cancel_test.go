package db_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/testkit"
)

// A caller that gives up inside its transaction (a client that hangs up
// mid-request) fails only itself: on Postgres pgx closes that connection,
// and the pool must not hand the dead connection to the next transaction
// (postgres.go). Each round runs 40 transactions at once, one in four
// cancelled between two statements.
func TestCancelledTransactionsLeaveOthersAlone(t *testing.T) {
	for _, driver := range testkit.Drivers() {
		t.Run(driver, func(t *testing.T) {
			d := openDB(t, driver)
			var (
				wg   sync.WaitGroup
				mu   sync.Mutex
				errs []error
			)
			for round := range 20 {
				for i := range 40 {
					name := fmt.Sprintf("r%d-m%02d", round, i)
					wg.Go(func() {
						ctx, cancel := context.WithCancel(context.Background())
						defer cancel()
						err := d.InTx(ctx, func(ctx context.Context) error {
							if err := insertItem(ctx, d, name); err != nil {
								return fmt.Errorf("insert: %w", err)
							}
							if i%4 == 3 {
								cancel()
								return insertItem(ctx, d, name+"b")
							}
							return nil
						})
						if i%4 != 3 && err != nil {
							mu.Lock()
							errs = append(errs, fmt.Errorf("%s: %w", name, err))
							mu.Unlock()
						}
					})
				}
				wg.Wait()
			}
			require.Empty(t, errs)
		})
	}
}
