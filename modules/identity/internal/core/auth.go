package core

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/contractflow/contractflow/platform/apperr"
	"github.com/contractflow/contractflow/platform/authn"
	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/httpx"
)

func invalidCredentials() *apperr.Error {
	return apperr.BadRequest("invalid_credentials", "The email or password is incorrect.")
}

func tokenInvalid(detail string) *apperr.Error { return apperr.Unauthorized("token_invalid", detail) }

// Login checks the lock first, then the password; a wrong password counts
// towards the lockout, a right one resets the count. Unknown emails spend
// the time of a hash check and answer exactly like a wrong password.
func (s *Service) Login(ctx context.Context, in LoginRequest) (TokenResponse, error) {
	if err := httpx.Validate(in); err != nil {
		return TokenResponse{}, err
	}
	u, err := s.store.userByEmail(ctx, normalizeEmail(in.Email))
	if db.IsNotFound(err) {
		if err := s.hasher.burn(ctx, in.Password); err != nil {
			return TokenResponse{}, err
		}
		return TokenResponse{}, invalidCredentials()
	}
	if err != nil {
		return TokenResponse{}, err
	}
	if s.isLocked(u) {
		until := u.LockoutEnd.UTC()
		return TokenResponse{}, apperr.BadRequest("account_locked",
			fmt.Sprintf("The account is locked after too many failed sign-ins until %s.", until.Format(time.RFC3339))).
			With("lockedUntil", until.Format(time.RFC3339))
	}
	ok, err := s.hasher.verify(ctx, in.Password, u.PasswordHash)
	if err != nil {
		return TokenResponse{}, fmt.Errorf("verify password of %s: %w", u.ID, err)
	}
	if !ok {
		if err := s.recordFailure(ctx, u); err != nil {
			return TokenResponse{}, err
		}
		return TokenResponse{}, invalidCredentials()
	}
	if !u.IsActive {
		return TokenResponse{}, apperr.BadRequest("account_disabled", "The account is disabled; ask an administrator.")
	}
	if u.AccessFailedCount > 0 || u.LockoutEnd != nil {
		err := s.db.InTx(ctx, func(ctx context.Context) error {
			return s.store.updateUser(ctx, u.ID, map[string]any{"access_failed_count": 0, "lockout_end": nil})
		})
		if err != nil {
			return TokenResponse{}, err
		}
	}
	var out TokenResponse
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		out, err = s.issue(ctx, u, uuid.NewString())
		return err
	})
	return out, err
}

// recordFailure counts a wrong password and locks the account when the
// count reaches the limit.
func (s *Service) recordFailure(ctx context.Context, u *User) error {
	if !u.LockoutEnabled {
		return nil
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		n, err := s.store.incrementFailures(ctx, u.ID)
		if err != nil || n < s.cfg.Lockout.MaxFailedAttempts {
			return err
		}
		until := s.now().Add(time.Duration(s.cfg.Lockout.Minutes) * time.Minute)
		return s.store.updateUser(ctx, u.ID, map[string]any{"lockout_end": until, "access_failed_count": 0})
	})
}

// issue signs an access token and stores a new refresh token in family.
func (s *Service) issue(ctx context.Context, u *User, family string) (TokenResponse, error) {
	roles, err := s.store.rolesOf(ctx, []string{u.ID})
	if err != nil {
		return TokenResponse{}, err
	}
	access, _, err := s.tokens.Issue(u.ID, u.Email, u.FullName, u.SecurityStamp, roles[u.ID])
	if err != nil {
		return TokenResponse{}, err
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return TokenResponse{}, err
	}
	refresh := base64.RawURLEncoding.EncodeToString(raw)
	now := s.now()
	err = s.store.insertToken(ctx, &RefreshToken{
		ID: uuid.Must(uuid.NewV7()).String(), UserID: u.ID, FamilyID: family, TokenHash: hashToken(refresh),
		ExpiresAt: now.Add(s.refreshTTL), CreatedAt: now,
	})
	if err != nil {
		return TokenResponse{}, err
	}
	return TokenResponse{AccessToken: access, RefreshToken: refresh, TokenType: "Bearer",
		ExpiresIn: int(s.tokens.TTL().Seconds()), User: s.dto(u, roles[u.ID])}, nil
}

func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}

// Refresh rotates a refresh token. Presenting one that was already rotated
// means it leaked: the whole family is revoked.
func (s *Service) Refresh(ctx context.Context, in RefreshRequest) (TokenResponse, error) {
	if err := httpx.Validate(in); err != nil {
		return TokenResponse{}, err
	}
	var out TokenResponse
	var reused bool
	err := s.db.InTx(ctx, func(ctx context.Context) error {
		t, err := s.store.tokenByHash(ctx, hashToken(in.RefreshToken))
		if db.IsNotFound(err) {
			return tokenInvalid("The refresh token is not valid.")
		}
		if err != nil {
			return err
		}
		now := s.now()
		if t.RevokedAt != nil || !t.ExpiresAt.After(now) {
			return tokenInvalid("The refresh token has expired or was revoked.")
		}
		won, err := s.store.markUsed(ctx, t.ID, now)
		if err != nil {
			return err
		}
		if !won {
			reused = true
			return s.store.revokeFamily(ctx, t.FamilyID, now)
		}
		u, err := s.store.userByID(ctx, t.UserID)
		if db.IsNotFound(err) {
			return tokenInvalid("The refresh token's user no longer exists.")
		}
		if err != nil {
			return err
		}
		if !u.IsActive {
			return tokenInvalid("The account is disabled.")
		}
		out, err = s.issue(ctx, u, t.FamilyID)
		return err
	})
	if err == nil && reused {
		// Committed the revocation; now refuse.
		return TokenResponse{}, apperr.Unauthorized("token_reused", "This refresh token was already used; every token of its sign-in is revoked. Sign in again.")
	}
	return out, err
}

// Logout revokes the refresh token's family when it belongs to the caller;
// any other token is ignored, so the answer reveals nothing.
func (s *Service) Logout(ctx context.Context, p authn.Principal, in RefreshRequest) error {
	if err := httpx.Validate(in); err != nil {
		return err
	}
	return s.db.InTx(ctx, func(ctx context.Context) error {
		t, err := s.store.tokenByHash(ctx, hashToken(in.RefreshToken))
		if db.IsNotFound(err) {
			return nil
		}
		if err != nil || t.UserID != p.UserID {
			return err
		}
		return s.store.revokeFamily(ctx, t.FamilyID, s.now())
	})
}

// ChangePassword is the caller's own change: the current password must be
// right, the new one at least 12 characters, different and confirmed.
func (s *Service) ChangePassword(ctx context.Context, p authn.Principal, in ChangePasswordRequest) error {
	if err := httpx.Validate(in); err != nil {
		return err
	}
	u, err := s.store.userByID(ctx, p.UserID)
	if db.IsNotFound(err) {
		return tokenInvalid("The signed-in user no longer exists.")
	}
	if err != nil {
		return err
	}
	ok, err := s.hasher.verify(ctx, in.CurrentPassword, u.PasswordHash)
	if err != nil {
		return err
	}
	fields := apperr.Fields{}
	if !ok {
		fields.Add("CurrentPassword", "The current password is incorrect.")
	}
	if e := s.checkPassword("NewPassword", in.NewPassword, max(MinChangePasswordLength, s.cfg.Password.RequiredLength)); e != nil {
		fields.Add("NewPassword", e.Fields["NewPassword"][0])
	}
	if in.NewPassword == in.CurrentPassword {
		fields.Add("NewPassword", "Must differ from the current password.")
	}
	if in.ConfirmNewPassword != in.NewPassword {
		fields.Add("ConfirmNewPassword", "Must match the new password.")
	}
	if err := fields.Err(); err != nil {
		return err
	}
	return s.setPassword(ctx, u.ID, u.ID, in.NewPassword)
}

// Me returns the caller and their effective permissions.
func (s *Service) Me(ctx context.Context, p authn.Principal) (MeDTO, error) {
	u, err := s.store.userByID(ctx, p.UserID)
	if db.IsNotFound(err) {
		return MeDTO{}, tokenInvalid("The signed-in user no longer exists.")
	}
	if err != nil {
		return MeDTO{}, err
	}
	d, err := s.userDTO(ctx, u)
	if err != nil {
		return MeDTO{}, err
	}
	return MeDTO{UserDTO: d, Permissions: s.effective(d.Roles)}, nil
}
