package core

import "time"

// Notification is one message as one of its recipients has it: the
// message's id and text with the recipient's read mark. Its rows are
// stored in the transaction of the change it reports.
type Notification struct {
	ID         string
	UserID     string
	Kind       string
	Title      string
	Body       string
	EntityType string
	EntityID   string
	ReadAt     *time.Time
	CreatedAt  time.Time
}

// Message is what a notification says, stored once however many users it
// is for.
type Message struct {
	ID, Kind, Title, Body, EntityType, EntityID string
	AudienceID, ExceptUserID                    string // "" for none
	CreatedAt                                   time.Time
}

// Ticket is a one-time WebSocket ticket: only its hash is stored, with the
// user it is bound to and the security stamp the user had when it was asked
// for, so any node can redeem it, once.
type Ticket struct {
	Hash      string `gorm:"primaryKey"`
	UserID    string
	Stamp     string
	ExpiresAt time.Time
}

func (Ticket) TableName() string { return "notification_tickets" }
