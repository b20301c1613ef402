// Package authn issues and verifies access tokens and carries the signed-in
// caller (the Principal) through a request's context.
package authn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/clock"
)

// Claims are the access token's claims (DESIGN §2).
type Claims struct {
	Email string   `json:"email"`
	Name  string   `json:"name"`
	Roles []string `json:"roles"`
	Stamp string   `json:"sst"` // the user's security stamp when the token was issued
	jwt.RegisteredClaims
}

// Tokens signs and verifies HS256 access tokens.
type Tokens struct {
	secret   []byte
	issuer   string
	audience string
	ttl      time.Duration
	clock    clock.Clock
	parser   *jwt.Parser
	// verified remembers the claims of tokens whose signature was checked:
	// a token's text fixes its claims, so a later request with the same
	// text needs only the time, issuer and audience checks (validator),
	// not the JSON decoding and HMAC that were a tenth of a cheap read.
	validator *jwt.Validator
	mu        sync.RWMutex
	verified  map[string]Claims
}

// verifiedCap bounds the verified tokens kept; when it is reached the map
// starts over (a token's next use verifies it again).
const verifiedCap = 4096

// NewTokens returns a signer/verifier; ttl is the access token lifetime.
func NewTokens(secret, issuer, audience string, ttl time.Duration, clk clock.Clock) *Tokens {
	checks := []jwt.ParserOption{
		jwt.WithIssuer(issuer),
		jwt.WithAudience(audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(clk.Now),
	}
	return &Tokens{
		secret: []byte(secret), issuer: issuer, audience: audience, ttl: ttl, clock: clk,
		// Only HS256 is accepted: a token signed with "none" or another
		// algorithm is refused before its signature is even considered.
		parser:    jwt.NewParser(append(checks, jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}))...),
		validator: jwt.NewValidator(checks...),
		verified:  map[string]Claims{},
	}
}

// TTL is the access token lifetime.
func (t *Tokens) TTL() time.Duration { return t.ttl }

// Issue signs an access token for the user.
func (t *Tokens) Issue(userID, email, name, stamp string, roles []string) (string, time.Time, error) {
	now := t.clock.Now()
	exp := now.Add(t.ttl)
	claims := Claims{
		Email: email, Name: name, Roles: roles, Stamp: stamp,
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   userID,
			ID:        uuid.NewString(),
			Issuer:    t.issuer,
			Audience:  jwt.ClaimStrings{t.audience},
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(t.secret)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign access token: %w", err)
	}
	return s, exp, nil
}

// ErrExpired distinguishes an expired token from an otherwise invalid one.
var ErrExpired = errors.New("access token expired")

// Parse verifies signature, algorithm, issuer, audience and lifetime.
func (t *Tokens) Parse(token string) (*Claims, error) {
	t.mu.RLock()
	c, ok := t.verified[token]
	t.mu.RUnlock()
	var err error
	if ok {
		err = t.validator.Validate(&c)
	} else {
		_, err = t.parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.secret, nil })
		if err == nil && c.Subject != "" {
			t.mu.Lock()
			if len(t.verified) >= verifiedCap {
				clear(t.verified)
			}
			t.verified[token] = c
			t.mu.Unlock()
		}
	}
	if errors.Is(err, jwt.ErrTokenExpired) {
		return nil, ErrExpired
	}
	if err != nil {
		return nil, fmt.Errorf("invalid access token: %w", err)
	}
	if c.Subject == "" {
		return nil, errors.New("invalid access token: no subject")
	}
	return &c, nil
}

// Principal is the signed-in caller of a request.
type Principal struct {
	UserID string
	Email  string
	Name   string
	Roles  []string
}

// RoleAdmin is the administrators' role. It passes every permission check;
// platform/authz decides that (authz.PassesEveryPolicy), not the callers.
const RoleAdmin = "Admin"

// HasRole reports whether the caller holds role.
func (p Principal) HasRole(role string) bool { return slices.Contains(p.Roles, role) }

// HasAnyRole reports whether the caller holds one of roles.
func (p Principal) HasAnyRole(roles ...string) bool {
	return slices.ContainsFunc(roles, p.HasRole)
}

// IsAdmin reports whether the caller holds the Admin role, for rules about
// the role itself (who may grant it) and for visibility. Whether the caller
// passes a permission policy is authz's question (Enforcer.Allowed).
func (p Principal) IsAdmin() bool { return p.HasRole(RoleAdmin) }

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the caller carried by ctx.
func PrincipalFrom(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}

// Caller returns the signed-in caller of a guarded request. Handlers behind
// the guard always have one; elsewhere the zero Principal comes back.
func Caller(ctx context.Context) Principal {
	p, _ := PrincipalFrom(ctx)
	return p
}
