package web

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/contractflow/contractflow/platform/db"
	"github.com/contractflow/contractflow/platform/migrate"
)

// Migrations creates the table of the pages' per-user preferences. The
// kernel runs them under the name "web".
func Migrations() []migrate.Migration {
	return []migrate.Migration{{
		Version: 1,
		Name:    "create web_user_prefs",
		Up: migrate.SQL(`CREATE TABLE web_user_prefs (
			user_id VARCHAR(36) NOT NULL PRIMARY KEY,
			language VARCHAR(8) NOT NULL,
			updated_at TIMESTAMP NOT NULL)`),
	}}
}

// userPref is one user's saved choices. Keyed by the user's id only: the
// users table belongs to the identity module.
type userPref struct {
	UserID    string `gorm:"primaryKey"`
	Language  string
	UpdatedAt time.Time
}

func (userPref) TableName() string { return "web_user_prefs" }

type prefs struct{ db *db.DB }

// get returns the user's language, "" when none was chosen.
func (p *prefs) get(ctx context.Context, userID string) (string, error) {
	var row userPref
	err := p.db.Conn(ctx).Where("user_id = ?", userID).Take(&row).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return "", nil
	}
	return row.Language, err
}

func (p *prefs) set(ctx context.Context, userID, lang string) error {
	return p.db.Conn(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"language", "updated_at"}),
	}).Create(&userPref{UserID: userID, Language: lang, UpdatedAt: time.Now().UTC()}).Error
}
