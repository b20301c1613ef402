package core

import (
	"fmt"
	"runtime"
	"time"
)

// Config is the identity section of the configuration.
type Config struct {
	Lockout struct {
		MaxFailedAttempts  int  `mapstructure:"maxFailedAttempts"`
		Minutes            int  `mapstructure:"minutes"`
		AllowedForNewUsers bool `mapstructure:"allowedForNewUsers"`
	} `mapstructure:"lockout"`
	Password struct {
		// RequiredLength 0 means 8 in development and 12 in production.
		RequiredLength int `mapstructure:"requiredLength"`
		Hash           struct {
			MemoryKiB   uint32 `mapstructure:"memoryKiB"`
			Iterations  uint32 `mapstructure:"iterations"`
			Parallelism uint8  `mapstructure:"parallelism"`
		} `mapstructure:"hash"`
	} `mapstructure:"password"`
	// HashConcurrency caps the password hashes computed at once (logins,
	// password changes, new users); 0 means one per core the Go runtime
	// uses (GOMAXPROCS).
	HashConcurrency int `mapstructure:"hashConcurrency"`
	// HashIsolation is where hashes run: "process", a child process at the
	// lowest CPU priority, so that they use only the cores requests leave
	// idle; or "inline", in the service, for hosts that forbid starting
	// processes.
	HashIsolation string `mapstructure:"hashIsolation"`
	// CacheSyncInterval bounds how stale another node's change to
	// permissions or user security state can be on this node.
	CacheSyncInterval time.Duration `mapstructure:"cacheSyncInterval"`
}

// DefaultConfig holds the documented defaults (DESIGN §2).
func DefaultConfig() *Config {
	c := &Config{}
	c.Lockout.MaxFailedAttempts = 5
	c.Lockout.Minutes = 15
	c.Lockout.AllowedForNewUsers = true
	c.Password.Hash.MemoryKiB = 19 * 1024
	c.Password.Hash.Iterations = 2
	c.Password.Hash.Parallelism = 1
	c.HashIsolation = isolationProcess
	c.CacheSyncInterval = time.Second
	return c
}

// MinChangePasswordLength is the floor of self-service changes (seed §5.4).
const MinChangePasswordLength = 12

// MaxPasswordLength admits long passphrases while bounding hashing work.
const MaxPasswordLength = 128

func (c *Config) validate(production bool) error {
	switch {
	case c.Lockout.MaxFailedAttempts < 1:
		return fmt.Errorf("config key identity.lockout.maxFailedAttempts: must be at least 1")
	case c.Lockout.Minutes < 1:
		return fmt.Errorf("config key identity.lockout.minutes: must be at least 1")
	case c.Password.RequiredLength < 0 || c.Password.RequiredLength > MaxPasswordLength:
		return fmt.Errorf("config key identity.password.requiredLength: must be 0 (automatic) to %d", MaxPasswordLength)
	case production && c.Password.RequiredLength != 0 && c.Password.RequiredLength < 12:
		return fmt.Errorf("config key identity.password.requiredLength: production needs 12 or more")
	case c.Password.Hash.MemoryKiB < 8 || c.Password.Hash.Iterations < 1 || c.Password.Hash.Parallelism < 1:
		return fmt.Errorf("config key identity.password.hash: memoryKiB ≥ 8, iterations ≥ 1 and parallelism ≥ 1")
	case production && c.Password.Hash.MemoryKiB < 19*1024:
		return fmt.Errorf("config key identity.password.hash.memoryKiB: production needs at least 19456 (19 MiB)")
	case c.HashConcurrency < 0:
		return fmt.Errorf("config key identity.hashConcurrency: must be 0 (one per core) or more")
	case c.HashIsolation != isolationProcess && c.HashIsolation != isolationInline:
		return fmt.Errorf("config key identity.hashIsolation: must be %s or %s, got %q", isolationProcess, isolationInline, c.HashIsolation)
	case c.CacheSyncInterval < 0:
		return fmt.Errorf("config key identity.cacheSyncInterval: must not be negative")
	}
	if c.HashConcurrency == 0 {
		c.HashConcurrency = runtime.GOMAXPROCS(0)
	}
	if c.Password.RequiredLength == 0 {
		c.Password.RequiredLength = 8
		if production {
			c.Password.RequiredLength = 12
		}
	}
	return nil
}
