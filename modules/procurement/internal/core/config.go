package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/contractflow/contractflow/platform/money"
)

// Config is the procurement section of the configuration.
type Config struct {
	// PolicyBThreshold is the estimated value from which a new evaluation
	// defaults to policy B, in currency units ("500000000", at most two
	// decimals). It is text so that configuration files and environment
	// variables give it exactly; Validate parses it.
	PolicyBThreshold string `mapstructure:"policyBThreshold"`
	// MinQuotations is how many quotations submitting needs, per policy.
	MinQuotations struct {
		A int `mapstructure:"A"`
		B int `mapstructure:"B"`
	} `mapstructure:"minQuotations"`
	// RequiredOpinions are the department opinions policy B's move out of
	// ChoYKienPhongBan waits for.
	RequiredOpinions []string `mapstructure:"requiredOpinions"`

	threshold money.Amount
}

// DefaultConfig holds the documented defaults (DESIGN §7).
func DefaultConfig() *Config {
	c := &Config{PolicyBThreshold: "500000000", RequiredOpinions: []string{"PRO", "CCM", "FIN"}}
	c.MinQuotations.A, c.MinQuotations.B = 1, 3
	return c
}

// Validate checks the section and names the key at fault.
func (c *Config) Validate() error {
	t, err := money.Parse(c.PolicyBThreshold)
	if err != nil || t < 0 {
		return fmt.Errorf("config key procurement.policyBThreshold: must be an amount of at least 0 with at most two decimals, got %q", c.PolicyBThreshold)
	}
	c.threshold = t
	for _, m := range []struct {
		key string
		n   int
	}{{"A", c.MinQuotations.A}, {"B", c.MinQuotations.B}} {
		if m.n < 1 || m.n > maxQuotations {
			return fmt.Errorf("config key procurement.minQuotations.%s: must be between 1 and %d, got %d", m.key, maxQuotations, m.n)
		}
	}
	for i, k := range c.RequiredOpinions {
		if _, ok := OpinionRoles[k]; !ok {
			return fmt.Errorf("config key procurement.requiredOpinions: %q is not an opinion kind (%s)", k, strings.Join(OpinionKinds, ", "))
		}
		if slices.Contains(c.RequiredOpinions[:i], k) {
			return fmt.Errorf("config key procurement.requiredOpinions: %s is listed twice", k)
		}
	}
	return nil
}

// Threshold is policyBThreshold as an amount.
func (c *Config) Threshold() money.Amount { return c.threshold }

// minQuotations is what submitting an evaluation of policy needs.
func (c *Config) minQuotations(policy string) int {
	if policy == PolicyB {
		return c.MinQuotations.B
	}
	return c.MinQuotations.A
}
