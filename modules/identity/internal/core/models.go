package core

import "time"

// Role is one of the twelve seeded roles.
type Role struct {
	ID          string
	Name        string
	Code        *string
	Description string
}

func (Role) TableName() string { return "roles" }

// User is an account. Email keeps the address as entered; NormalizedEmail
// (trimmed, lower case) is what login and uniqueness compare.
type User struct {
	ID                string
	Email             string
	NormalizedEmail   string
	FullName          string
	SearchText        string // search.Text(email, full name): what GET /api/users?search= matches
	PasswordHash      string
	IsActive          bool
	SecurityStamp     string
	LockoutEnabled    bool
	AccessFailedCount int
	LockoutEnd        *time.Time
	CreatedAt         time.Time
	CreatedBy         *string
	UpdatedAt         time.Time
	UpdatedBy         *string
	Version           int
}

func (User) TableName() string { return "users" }

// userRole links users and roles.
type userRole struct {
	UserID string
	RoleID string
}

func (userRole) TableName() string { return "user_roles" }

// RefreshToken is stored as a SHA-256 hash of the random token. Tokens of one
// login share a family: rotating marks the old one used, and presenting a
// used one revokes the family.
type RefreshToken struct {
	ID        string
	UserID    string
	FamilyID  string
	TokenHash string
	ExpiresAt time.Time
	CreatedAt time.Time
	UsedAt    *time.Time
	RevokedAt *time.Time
}

func (RefreshToken) TableName() string { return "refresh_tokens" }

// MenuItem is one entry of the menu tree.
type MenuItem struct {
	MenuKey   string `gorm:"primaryKey"`
	Title     string
	Path      string
	ParentKey *string
	SortOrder int
}

func (MenuItem) TableName() string { return "menu_items" }

// Permission is one row of the matrix: a role's four flags on a menu key.
type Permission struct {
	RoleID    string `gorm:"primaryKey"`
	MenuKey   string `gorm:"primaryKey"`
	CanRead   bool
	CanCreate bool
	CanUpdate bool
	CanDelete bool
	UpdatedAt time.Time
	UpdatedBy *string
}

func (Permission) TableName() string { return "permissions" }

// state holds the change counters nodes compare to know when to drop their
// caches of permissions and of user security state.
type state struct {
	ID                 int
	PermissionsVersion int64
	UsersVersion       int64
}

func (state) TableName() string { return "identity_state" }
