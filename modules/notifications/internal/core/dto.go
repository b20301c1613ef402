package core

import "time"

// DTO is a notification as the API shows it.
type DTO struct {
	ID         string     `json:"id"`
	UserID     string     `json:"userId"`
	Kind       string     `json:"kind"`
	Title      string     `json:"title"`
	Body       string     `json:"body"`
	EntityType string     `json:"entityType"`
	EntityID   string     `json:"entityId"`
	ReadAt     *time.Time `json:"readAt"`
	CreatedAt  time.Time  `json:"createdAt"`
}

func toDTO(n Notification) DTO {
	d := DTO{ID: n.ID, UserID: n.UserID, Kind: n.Kind, Title: n.Title, Body: n.Body, EntityType: n.EntityType,
		EntityID: n.EntityID, CreatedAt: n.CreatedAt.UTC()}
	if n.ReadAt != nil {
		at := n.ReadAt.UTC()
		d.ReadAt = &at
	}
	return d
}

// Count is the unread count.
type Count struct {
	Count int64 `json:"count"`
}

// Updated says how many notifications read-all marked.
type Updated struct {
	Updated int64 `json:"updated"`
}

// TicketDTO is a one-time WebSocket ticket.
type TicketDTO struct {
	Ticket    string    `json:"ticket"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Push is what a socket receives: {"type":"notification","data":{…}}.
type Push struct {
	Type string `json:"type"`
	Data *DTO   `json:"data,omitempty"`
}
