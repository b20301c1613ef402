package search

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/platform/db"
)

// Partitioned is a second SQLite trigram index of a table's search_text,
// split by the value of one of its columns (a contract's phase): every
// entry's rowid is the value's code << 32 | the row's rowid, so a search
// within one value reads only that value's stretch of each trigram's list.
// Counting "móng" among the 10 000 contracts of one phase then reads the
// phase's ~600 matches instead of probing the phase's 10 000 rows against
// the 6 000 matches of every phase.
//
// A move changes the value, and an FTS5 write costs ~0.2 ms per
// transaction (it flushes a segment at each commit), so the index is not
// written by the moves themselves. A trigger records each changed row in a
// pending table instead (a one-row upsert), and Sync applies the pending
// rows in one transaction (a job of the owning module, contracts.search,
// every 250 ms). Queries stay exact meanwhile: an entry of a pending row
// is never trusted, and the pending rows now holding the value are checked
// by their own text.
//
// Only live rows (deleted_at IS NULL) are indexed; the table must have
// deleted_at and search_text, the column must be NOT NULL, and rowids must
// stay under 2³².
type Partitioned struct {
	db            *db.DB
	table, column string
	fts, codes    string // the FTS5 table; the codes of the values
	pending       string // rows changed since the last Sync

	mu    sync.Mutex
	known map[string]int64 // the committed codes of values
}

// rowidBits is how many low bits of an entry's rowid hold the row's rowid.
const rowidBits = 32

// EnsurePartitioned prepares the partitioned index of table by column and
// returns it, or nil where there is none to keep (Postgres, or SQLite
// without FTS5: searches there take other paths).
func EnsurePartitioned(ctx context.Context, database *db.DB, table, column string) (*Partitioned, error) {
	if database.Dialect() != db.SQLite {
		return nil, nil
	}
	fts5, err := hasFTS5(database.Conn(ctx))
	if err != nil {
		return nil, err
	}
	p := &Partitioned{db: database, table: table, column: column, fts: table + "_pfts", codes: table + "_pfts_codes", pending: table + "_pfts_pending",
		known: map[string]int64{}}
	err = database.InTx(ctx, func(ctx context.Context) error {
		tx := database.Conn(ctx)
		if !fts5 {
			return p.dropTriggers(tx)
		}
		return p.ensure(tx)
	})
	if err != nil || !fts5 {
		return nil, err
	}
	return p, nil
}

func (p *Partitioned) triggers() []string {
	return []string{p.table + "_pfts_insert", p.table + "_pfts_update", p.table + "_pfts_delete"}
}

func (p *Partitioned) dropTriggers(tx *gorm.DB) error {
	for _, name := range p.triggers() {
		if err := tx.Exec(`DROP TRIGGER IF EXISTS ` + name).Error; err != nil {
			return err
		}
	}
	return nil
}

// ensure creates what is missing and, when the triggers were (a new
// database, or one a binary without FTS5 wrote to), builds the index anew.
func (p *Partitioned) ensure(tx *gorm.DB) error {
	var n int64
	names := p.triggers()
	if err := tx.Raw(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' AND name IN ?`, names).Scan(&n).Error; err != nil {
		return err
	}
	if n == int64(len(names)) {
		return nil
	}
	// value is the column's value while the row is live, else NULL.
	value := func(row string) string {
		return fmt.Sprintf("CASE WHEN %[1]s.deleted_at IS NULL THEN %[1]s.%[2]s END", row, p.column)
	}
	upsert := `INSERT INTO ` + p.pending + ` (rid, indexed, value) VALUES (%s, %s, %s)
		ON CONFLICT (rid) DO UPDATE SET value = excluded.value`
	stmts := []string{
		`CREATE VIRTUAL TABLE IF NOT EXISTS ` + p.fts + ` USING fts5(search_text, content='', contentless_delete=1, tokenize='trigram')`,
		`CREATE TABLE IF NOT EXISTS ` + p.codes + ` (value TEXT PRIMARY KEY, code INTEGER NOT NULL UNIQUE)`,
		// indexed: the value the row's entry is filed under (NULL: none),
		// kept from the first change since the last Sync; value: now.
		`CREATE TABLE IF NOT EXISTS ` + p.pending + ` (rid INTEGER PRIMARY KEY, indexed TEXT, value TEXT)`,
		`CREATE TRIGGER IF NOT EXISTS ` + names[0] + ` AFTER INSERT ON ` + p.table + ` BEGIN ` +
			fmt.Sprintf(upsert, "new.rowid", "NULL", value("new")) + `; END`,
		`CREATE TRIGGER IF NOT EXISTS ` + names[1] + ` AFTER UPDATE OF ` + p.column + `, search_text, deleted_at ON ` + p.table +
			fmt.Sprintf(` WHEN old.%[1]s IS NOT new.%[1]s OR old.search_text IS NOT new.search_text OR old.deleted_at IS NOT new.deleted_at BEGIN `, p.column) +
			fmt.Sprintf(upsert, "new.rowid", value("old"), value("new")) + `; END`,
		`CREATE TRIGGER IF NOT EXISTS ` + names[2] + ` AFTER DELETE ON ` + p.table + ` BEGIN ` +
			fmt.Sprintf(upsert, "old.rowid", value("old"), "NULL") + `; END`,
		// Whatever happened while the triggers were missing, start over:
		// every live row is pending, and the next Sync files it.
		`INSERT INTO ` + p.fts + ` (` + p.fts + `) VALUES ('delete-all')`,
		`DELETE FROM ` + p.pending,
		`INSERT INTO ` + p.pending + ` (rid, indexed, value) SELECT rowid, NULL, ` + p.column + ` FROM ` + p.table + ` WHERE deleted_at IS NULL`,
	}
	for _, s := range stmts {
		if err := tx.Exec(s).Error; err != nil {
			return err
		}
	}
	return p.apply(tx)
}

// Sync files the rows changed since the last Sync, in one transaction.
func (p *Partitioned) Sync(ctx context.Context) error {
	var any int64
	if err := p.db.Conn(ctx).Raw(`SELECT COUNT(*) FROM (SELECT 1 FROM ` + p.pending + ` LIMIT 1) x`).Scan(&any).Error; err != nil || any == 0 {
		return err
	}
	return p.db.InTx(ctx, func(ctx context.Context) error { return p.apply(p.db.Conn(ctx)) })
}

// apply moves every pending row's entry to where the row is now. The
// caller holds the write transaction, so nothing changes in between.
func (p *Partitioned) apply(tx *gorm.DB) error {
	entry := func(code string) string { return fmt.Sprintf("(%s << %d) | p.rid", code, rowidBits) }
	stmts := []string{
		// A code for each value seen for the first time.
		`INSERT INTO ` + p.codes + ` (value, code)
			SELECT v, (SELECT COALESCE(MAX(code), 0) FROM ` + p.codes + `) + ROW_NUMBER() OVER (ORDER BY v)
			FROM (SELECT DISTINCT value AS v FROM ` + p.pending + ` WHERE value IS NOT NULL
				AND value NOT IN (SELECT value FROM ` + p.codes + `))`,
		`DELETE FROM ` + p.fts + ` WHERE rowid IN (SELECT ` + entry("c.code") + ` FROM ` + p.pending + ` p
			JOIN ` + p.codes + ` c ON c.value = p.indexed)`,
		`INSERT INTO ` + p.fts + ` (rowid, search_text) SELECT ` + entry("c.code") + `, t.search_text FROM ` + p.pending + ` p
			JOIN ` + p.codes + ` c ON c.value = p.value JOIN ` + p.table + ` t ON t.rowid = p.rid`,
		`DELETE FROM ` + p.pending,
	}
	var filed int64
	for i, s := range stmts {
		r := tx.Exec(s)
		if r.Error != nil {
			return r.Error
		}
		if i == 2 {
			filed = r.RowsAffected
		}
	}
	if filed >= optimizeAfter {
		// A bulk load leaves many segments, and every search reads each.
		return tx.Exec(`INSERT INTO ` + p.fts + ` (` + p.fts + `) VALUES ('optimize')`).Error
	}
	return nil
}

// optimizeAfter is how many entries filed at once are worth merging the
// index into one segment (~0.4 s for 100 000 rows); FTS5 merges the small
// segments of everyday Syncs by itself.
const optimizeAfter = 10_000

// phrases is the FTS5 query of rows holding every word (each of at least
// three runes) as a substring.
func phrases(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = Phrase(w)
	}
	return strings.Join(q, " ")
}

// entries is the condition that an entry is filed under value, and its
// arguments. A value's code never changes once committed, so a code read
// once is remembered; a value without one yet (a phase no Sync has filed)
// is looked up by the statement itself, in the snapshot it reads, since a
// Sync committing in between could file entries under a new code and
// empty the pending rows that stood for them.
func (p *Partitioned) entries(ctx context.Context, value string) (string, []any, error) {
	p.mu.Lock()
	c, ok := p.known[value]
	p.mu.Unlock()
	if !ok {
		// Outside any transaction: a code read inside a Sync that then
		// rolls back could go to another value.
		err := p.db.Conn(db.WithoutTx(ctx)).Raw(`SELECT COALESCE(MAX(code), 0) FROM `+p.codes+` WHERE value = ?`, value).Scan(&c).Error
		if err != nil {
			return "", nil, err
		}
		if c == 0 {
			code := `(SELECT code FROM ` + p.codes + ` WHERE value = ?)`
			return fmt.Sprintf("rowid BETWEEN %[1]s << %[2]d AND (%[1]s << %[2]d) + %[3]d", code, rowidBits, 1<<rowidBits-1),
				[]any{value, value}, nil
		}
		p.mu.Lock()
		p.known[value] = c
		p.mu.Unlock()
	}
	return "rowid BETWEEN ? AND ?", []any{c << rowidBits, c<<rowidBits | (1<<rowidBits - 1)}, nil
}

// Candidates is a query of (rid, filed): the rowids that may hold every
// word (each of at least three runes) among the rows whose column is
// value. Filed rows (filed = 1) come from the index: among them, those not
// pending match exactly as they are now. The others are the pending rows
// now holding value, whatever their text (check those with Stale).
func (p *Partitioned) Candidates(ctx context.Context, value string, words []string) (string, []any, error) {
	in, args, err := p.entries(ctx, value)
	if err != nil {
		return "", nil, err
	}
	return fmt.Sprintf(`SELECT rowid & %d, 1 FROM %s WHERE %s MATCH ? AND %s UNION ALL SELECT rid, 0 FROM %s WHERE value = ?`,
			1<<rowidBits-1, p.fts, p.fts, in, p.pending),
		append(append([]any{phrases(words)}, args...), value), nil
}

// Count is an expression counting, from m (a materialised Candidates of
// value and words), the live rows whose column is value and whose
// search_text holds every word. It reads the table only for the pending
// rows, and the index not again.
func (p *Partitioned) Count(m string, words []string) (string, []any) {
	like, args := Likes(p.table, words)
	return fmt.Sprintf(`((SELECT COUNT(*) FROM %[1]s WHERE filed AND rid NOT IN (SELECT rid FROM %[2]s))
		+ (SELECT COUNT(*) FROM %[1]s JOIN %[3]s ON %[3]s.rowid = %[1]s.rid WHERE NOT %[1]s.filed AND %[4]s))`,
		m, p.pending, p.table, like), args
}

// Match narrows q to rows whose search_text holds word, in any value: the
// index decides for the rows it is current for, LIKE for the pending ones.
// A word shorter than a trigram is matched by LIKE alone.
func (p *Partitioned) Match(q *gorm.DB, word string) *gorm.DB { return p.match(q, word, "") }

// Filter is Match for a word that most rows hold ("ong" is in almost every
// Vietnamese title): the index still decides which rows match, but the
// unary + keeps the planner from driving the plan from it, so it walks the
// index of the list's order and stops after a page of matches instead of
// fetching and sorting every match.
func (p *Partitioned) Filter(q *gorm.DB, word string) *gorm.DB { return p.match(q, word, "+") }

func (p *Partitioned) match(q *gorm.DB, word, plus string) *gorm.DB {
	like, args := Likes(p.table, []string{word})
	if !Indexed([]string{word}) {
		return q.Where(like, args...)
	}
	cond := fmt.Sprintf(`(%[1]s%[2]s.rowid IN (SELECT rowid & %[3]d FROM %[4]s WHERE %[4]s MATCH ?) AND NOT %[5]s) OR (%[5]s AND %[6]s)`,
		plus, p.table, 1<<rowidBits-1, p.fts, p.Stale(), like)
	return q.Where(cond, append([]any{Phrase(word)}, args...)...)
}

// Stale is the condition that the table's row changed since the last Sync:
// its entry may be out of date, so its own search_text decides.
func (p *Partitioned) Stale() string {
	return p.table + ".rowid IN (SELECT rid FROM " + p.pending + ")"
}

// Likes is the condition that table's search_text holds every word, by
// LIKE ("true" for no words).
func Likes(table string, words []string) (string, []any) {
	if len(words) == 0 {
		return "true", nil
	}
	conds := make([]string, len(words))
	args := make([]any, len(words))
	for i, w := range words {
		conds[i] = table + ".search_text LIKE ? " + db.LikeEscape
		args[i] = db.Contains(w)
	}
	return strings.Join(conds, " AND "), args
}
