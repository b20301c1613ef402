package authn_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/clock"
)

// A token verified once is remembered, but every use still checks its
// lifetime, and a token of another text is verified on its own.
func TestParseRemembersOnlyWhatItVerified(t *testing.T) {
	clk := clock.NewManual(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
	tokens := authn.NewTokens("0123456789abcdef0123456789abcdef", "contractflow", "contractflow-api", 15*time.Minute, clk)
	tok, _, err := tokens.Issue("u1", "a@example.com", "A", "stamp", []string{"Drafter"})
	require.NoError(t, err)

	for range 2 { // the first parse verifies, the second answers from memory
		c, err := tokens.Parse(tok)
		require.NoError(t, err)
		require.Equal(t, "u1", c.Subject)
		require.Equal(t, []string{"Drafter"}, c.Roles)
	}

	// Another signature over the same claims is not the remembered token.
	forged := tok[:len(tok)-2] + "AA"
	if forged == tok {
		forged = tok[:len(tok)-2] + "BB"
	}
	_, err = tokens.Parse(forged)
	require.Error(t, err)

	// Another secret's signer: same claims shape, refused.
	other := authn.NewTokens("another-secret-another-secret-32", "contractflow", "contractflow-api", 15*time.Minute, clk)
	_, err = other.Parse(tok)
	require.Error(t, err)

	clk.Advance(16 * time.Minute)
	_, err = tokens.Parse(tok)
	require.ErrorIs(t, err, authn.ErrExpired)
}
