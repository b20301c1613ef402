package core

import "time"

// UserDTO is a user as the API shows it.
type UserDTO struct {
	ID         string     `json:"id"`
	Email      string     `json:"email"`
	FullName   string     `json:"fullName"`
	IsActive   bool       `json:"isActive"`
	IsLocked   bool       `json:"isLocked"`
	LockoutEnd *time.Time `json:"lockoutEnd"`
	CreatedAt  time.Time  `json:"createdAt"`
	Roles      []string   `json:"roles"`
	Version    int        `json:"version"` // send it back on PUT to detect concurrent changes
}

// TokenResponse answers login and refresh.
type TokenResponse struct {
	AccessToken  string  `json:"accessToken"`
	RefreshToken string  `json:"refreshToken"`
	TokenType    string  `json:"tokenType"`
	ExpiresIn    int     `json:"expiresIn"`
	User         UserDTO `json:"user"`
}

// Flags are the four actions of one menu key.
type Flags struct {
	Read   bool `json:"read"`
	Create bool `json:"create"`
	Update bool `json:"update"`
	Delete bool `json:"delete"`
}

func (f Flags) or(g Flags) Flags {
	return Flags{Read: f.Read || g.Read, Create: f.Create || g.Create, Update: f.Update || g.Update, Delete: f.Delete || g.Delete}
}

// MeDTO is the caller with their effective permissions.
type MeDTO struct {
	UserDTO
	Permissions map[string]Flags `json:"permissions"`
}

// RoleDTO is one role.
type RoleDTO struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Code        *string `json:"code"`
	Description string  `json:"description"`
}

// MenuNode is one entry of a menu tree.
type MenuNode struct {
	Key         string     `json:"key"`
	Title       string     `json:"title"`
	Path        string     `json:"path"`
	Order       int        `json:"order"`
	Permissions Flags      `json:"permissions"`
	Children    []MenuNode `json:"children"`
}

// PermissionDTO is one row of the matrix.
type PermissionDTO struct {
	Role      string `json:"role"`
	MenuKey   string `json:"menuKey"`
	CanRead   bool   `json:"canRead"`
	CanCreate bool   `json:"canCreate"`
	CanUpdate bool   `json:"canUpdate"`
	CanDelete bool   `json:"canDelete"`
}

// Requests.

type LoginRequest struct {
	Email    string `json:"email" validate:"required,max=254"`
	Password string `json:"password" validate:"required,max=128"`
}

type RefreshRequest struct {
	// No length or format rule: whatever string is not a live refresh
	// token is 401 token_invalid, so the answer hints at no format.
	RefreshToken string `json:"refreshToken" validate:"required"`
}

type ChangePasswordRequest struct {
	CurrentPassword    string `json:"currentPassword" validate:"required,max=128"`
	NewPassword        string `json:"newPassword" validate:"required,max=128"`
	ConfirmNewPassword string `json:"confirmNewPassword" validate:"required,max=128"`
}

type CreateUserRequest struct {
	Email    string   `json:"email" validate:"required,email,max=254"`
	FullName string   `json:"fullName" validate:"required,max=200"`
	Password string   `json:"password" validate:"required,max=128"`
	Roles    []string `json:"roles" validate:"max=12,dive,required,max=50"`
}

type UpdateUserRequest struct {
	FullName string `json:"fullName" validate:"required,max=200"`
	IsActive *bool  `json:"isActive" validate:"required"`
	Version  *int   `json:"version"`
}

type SetRolesRequest struct {
	Roles []string `json:"roles" validate:"required,max=12,dive,required,max=50"`
}

type ResetPasswordRequest struct {
	NewPassword string `json:"newPassword" validate:"required,max=128"`
}

type PermissionRequest struct {
	Role      string `json:"role" validate:"required,max=50"`
	MenuKey   string `json:"menuKey" validate:"required,max=50"`
	CanRead   *bool  `json:"canRead" validate:"required"`
	CanCreate *bool  `json:"canCreate" validate:"required"`
	CanUpdate *bool  `json:"canUpdate" validate:"required"`
	CanDelete *bool  `json:"canDelete" validate:"required"`
}
