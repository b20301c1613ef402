package core

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/contractflow/contractflow/modules/workflowdesigner"
	"github.com/contractflow/contractflow/platform/migrate"
	"github.com/contractflow/contractflow/platform/search"
)

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "contracts, approvals, comments, attachments, code sequences", Up: migrate.SQL(
		`CREATE TABLE contracts (
			id VARCHAR(36) PRIMARY KEY,
			title VARCHAR(300) NOT NULL,
			contract_type VARCHAR(32) NOT NULL,
			template_id VARCHAR(36) NULL,
			supplier_id VARCHAR(36) NOT NULL,
			project_id VARCHAR(36) NULL,
			department_id VARCHAR(36) NULL,
			value BIGINT NOT NULL,
			currency VARCHAR(3) NOT NULL,
			bypass_procurement_and_ccm BOOLEAN NOT NULL DEFAULT FALSE,
			phase VARCHAR(32) NOT NULL,
			sla_deadline TIMESTAMP NULL,
			sla_warning_sent BOOLEAN NOT NULL DEFAULT FALSE,
			ma_hop_dong VARCHAR(64) NULL,
			draft_data TEXT NOT NULL,
			drafter_id VARCHAR(36) NOT NULL,
			workflow_definition_id VARCHAR(36) NOT NULL,
			purchase_evaluation_id VARCHAR(36) NULL,
			budget_line_id VARCHAR(36) NULL,
			description TEXT NOT NULL,
			start_date VARCHAR(10) NULL,
			end_date VARCHAR(10) NULL,
			version INTEGER NOT NULL DEFAULT 1,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL,
			deleted_at TIMESTAMP NULL,
			deleted_by VARCHAR(36) NULL)`,
		`CREATE UNIQUE INDEX ux_contracts_ma_hop_dong ON contracts (ma_hop_dong) WHERE ma_hop_dong IS NOT NULL`,
		`CREATE INDEX ix_contracts_created ON contracts (created_at) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_drafter ON contracts (drafter_id, created_at) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_workflow_phase ON contracts (workflow_definition_id, phase, sla_deadline) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_phase ON contracts (phase, created_at) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_sla ON contracts (sla_deadline) WHERE deleted_at IS NULL AND sla_deadline IS NOT NULL`,
		`CREATE INDEX ix_contracts_supplier ON contracts (supplier_id) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_project ON contracts (project_id) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_department ON contracts (department_id) WHERE deleted_at IS NULL`,
		`CREATE TABLE contract_approvals (
			id VARCHAR(36) PRIMARY KEY,
			contract_id VARCHAR(36) NOT NULL REFERENCES contracts (id),
			from_phase VARCHAR(32) NOT NULL,
			to_phase VARCHAR(32) NOT NULL,
			approver_user_id VARCHAR(36) NULL,
			decision VARCHAR(16) NOT NULL,
			comment TEXT NOT NULL,
			approved_at TIMESTAMP NOT NULL)`,
		`CREATE INDEX ix_contract_approvals_contract ON contract_approvals (contract_id, approved_at)`,
		`CREATE TABLE contract_comments (
			id VARCHAR(36) PRIMARY KEY,
			contract_id VARCHAR(36) NOT NULL REFERENCES contracts (id),
			phase VARCHAR(32) NOT NULL,
			content TEXT NOT NULL,
			author_id VARCHAR(36) NOT NULL,
			created_at TIMESTAMP NOT NULL)`,
		`CREATE INDEX ix_contract_comments_contract ON contract_comments (contract_id, created_at)`,
		`CREATE TABLE contract_attachments (
			id VARCHAR(36) PRIMARY KEY,
			contract_id VARCHAR(36) NOT NULL REFERENCES contracts (id),
			file_name VARCHAR(255) NOT NULL,
			storage_path VARCHAR(255) NOT NULL,
			purpose VARCHAR(32) NOT NULL,
			size BIGINT NOT NULL,
			content_type VARCHAR(128) NOT NULL,
			uploaded_by VARCHAR(36) NOT NULL,
			created_at TIMESTAMP NOT NULL)`,
		`CREATE INDEX ix_contract_attachments_contract ON contract_attachments (contract_id, created_at)`,
		`CREATE TABLE contract_code_sequences (
			prefix VARCHAR(64) PRIMARY KEY,
			last_seq INTEGER NOT NULL)`,
	)}, {Version: 2, Name: "covering indexes of the reporting aggregates", Up: migrate.SQL(
		`CREATE INDEX ix_contracts_phase_totals ON contracts (phase, value, sla_deadline) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_supplier_value ON contracts (supplier_id, phase, value) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_project_value ON contracts (project_id, phase, value) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contracts_created_value ON contracts (created_at, value) WHERE deleted_at IS NULL`,
		`CREATE INDEX ix_contract_approvals_to_phase ON contract_approvals (to_phase, approved_at)`,
	)}, {Version: 3, Name: "reporting indexes the SQLite planner recognises as covering", Up: migrate.SQL(
		// SQLite (3.54) counts a column used only in a partial index's WHERE as
		// missing from the index, so without ANALYZE statistics it preferred
		// the narrower non-covering indexes of version 1 to those of version
		// 2 and read the table once per row (a 100 000-contract dashboard took
		// over a second). Each replacement carries deleted_at (always NULL in
		// it, one byte) and is covering on both engines.
		`DROP INDEX ix_contracts_phase_totals`,
		`DROP INDEX ix_contracts_supplier_value`,
		`DROP INDEX ix_contracts_project_value`,
		`DROP INDEX ix_contracts_created_value`,
		`DROP INDEX ix_contract_approvals_to_phase`,
		// Per phase: the count and sum, and the overdue range of sla_deadline.
		`CREATE INDEX ix_contracts_report_phase ON contracts (phase, sla_deadline, value, deleted_at) WHERE deleted_at IS NULL`,
		// The rankings leave rejected contracts out; the query repeats the
		// literal predicate so that both planners can use these.
		`CREATE INDEX ix_contracts_report_supplier ON contracts (supplier_id, value, phase, deleted_at) WHERE deleted_at IS NULL AND phase <> 'TuChoi'`,
		`CREATE INDEX ix_contracts_report_project ON contracts (project_id, value, phase, deleted_at) WHERE deleted_at IS NULL AND phase <> 'TuChoi'`,
		// The keyset (created_at, id) of exports and of the default list
		// order, and the monthly sums (created_at range, value).
		`CREATE INDEX ix_contracts_created_keyset ON contracts (created_at, id, value, deleted_at) WHERE deleted_at IS NULL`,
		// Published in a period: the approvals of the period, then "is the
		// contract live?", neither reading a table row.
		`CREATE INDEX ix_contract_approvals_published ON contract_approvals (to_phase, approved_at, contract_id)`,
		`CREATE INDEX ix_contracts_live_id ON contracts (id, deleted_at) WHERE deleted_at IS NULL`,
	)}, {Version: 4, Name: "folded search text of title and code", Up: v4SearchText},
		{Version: 5, Name: "hash-chained approvals", Up: v5HistoryChain},
		{Version: 6, Name: "when the SLA job last reminded of an overdue contract", Up: migrate.SQL(
			`ALTER TABLE contracts ADD COLUMN sla_reminded_at TIMESTAMP NULL`,
		)},
		{Version: 7, Name: "placeholders a draft export could not fill", Up: migrate.SQL(
			`ALTER TABLE contract_attachments ADD COLUMN unfilled_placeholders TEXT NOT NULL DEFAULT '[]'`,
		)},
		{Version: 8, Name: "dashboard totals kept by triggers", Up: migrate.PerDialect(totalsSQLite, totalsPostgres)},
		{Version: 9, Name: "deadline totals kept by triggers", Up: migrate.PerDialect(deadlinesSQLite, deadlinesPostgres)},
		{Version: 10, Name: "indexes in the order of the detail's thread and of a phase's list", Up: migrate.PerDialect(v10SQLite, v10Postgres)},
		{Version: 11, Name: "indexes no query needs since the totals are kept by triggers", Up: migrate.SQL(
			// Every write pays for every index of its table (a contract's insert
			// one page each, a move each index holding phase or sla_deadline,
			// and on Postgres every index, a move not being a HOT update);
			// docs/query-plans.md ("Indexes a write pays for") shows the plans
			// that serve each query without these.
			// The keyset index (created_at, id, value, deleted_at) serves every
			// range and order of created_at.
			`DROP INDEX ix_contracts_created`,
			// The rankings read contract_totals (migration 8); a list filtered
			// by supplier or project uses ix_contracts_supplier/project.
			`DROP INDEX ix_contracts_report_supplier`,
			`DROP INDEX ix_contracts_report_project`,
			// "Is the published contract live?" is a primary-key read of the
			// few rows of the part of an hour the buckets do not cover.
			`DROP INDEX ix_contracts_live_id`,
			// Only entries into DaPhatHanh are ever looked up by time, so only
			// they are indexed: the other moves' history rows skip it.
			`DROP INDEX ix_contract_approvals_published`,
			`CREATE INDEX ix_contract_approvals_published_at ON contract_approvals (approved_at, contract_id) WHERE to_phase = 'DaPhatHanh'`,
			// Most contracts name no department; the veto of a department's
			// deletion (department_id = ?) implies IS NOT NULL on both engines.
			`DROP INDEX ix_contracts_department`,
			`CREATE INDEX ix_contracts_department_set ON contracts (department_id) WHERE deleted_at IS NULL AND department_id IS NOT NULL`,
		)},
		// A list searches within a phase: on Postgres the trigram index keyed
		// by phase first hands the heap that phase's matches alone
		// (docs/query-plans.md, "Postgres"). SQLite's search by phase is
		// search.Partitioned.
		{Version: 12, Name: "the Postgres trigram index keyed by phase", Up: func(_ context.Context, tx *gorm.DB) error {
			return search.TrigramIndexBy(tx, "contracts", "phase")
		}},
		// Version 12's index still decoded the whole list of a trigram as
		// common as "ong" for every search; each trigram keyed by the
		// phase is read for that phase alone (search.Keyed,
		// docs/query-plans.md).
		{Version: 13, Name: "the Postgres search index of trigrams keyed by phase", Up: func(_ context.Context, tx *gorm.DB) error {
			return search.KeyedTrigramIndex(tx, "contracts", "phase")
		}},
		// Every search on Postgres read the GIN pending list whole, up to
		// 4 MB of it (search.ShortPendingLists).
		{Version: 14, Name: "a short pending list for the Postgres search index", Up: func(_ context.Context, tx *gorm.DB) error {
			return search.ShortPendingLists(tx, "ix_contracts_search_keys")
		}},
		// The totals' triggers call contract_total_add for each bucket a
		// write leaves or enters: as a SQL function it was parsed and
		// planned on every call, as PL/pgSQL once per session (the same
		// change as workflowdesigner's migration 5).
		{Version: 15, Name: "the Postgres totals function in PL/pgSQL", Up: migrate.PerDialect(nil, []string{
			`CREATE OR REPLACE FUNCTION contract_total_add(d VARCHAR, b VARCHAR, dn BIGINT, dv BIGINT) RETURNS void LANGUAGE plpgsql AS $$
			BEGIN
				INSERT INTO contract_totals (dim, bucket, stripe, n, value) VALUES (d, b, (pg_backend_pid() % 16)::smallint, dn, dv)
				ON CONFLICT (dim, bucket, stripe) DO UPDATE SET n = contract_totals.n + excluded.n, value = contract_totals.value + excluded.value;
			END $$`})},
		// A search's exact count read the heap page of every match through
		// the keyed trigram index; the word index counts and orders the
		// matches from its own primary key (search.WordIndex,
		// docs/query-plans.md), and replaces the keyed index, which every
		// move wrote too.
		{Version: 16, Name: "the Postgres word index of contracts by phase", Up: func(_ context.Context, tx *gorm.DB) error {
			if tx.Dialector.Name() != "postgres" {
				return nil
			}
			if err := search.CreateWordIndex(tx, "contracts", "phase"); err != nil {
				return err
			}
			return search.DropKeyedTrigramIndex(tx, "contracts")
		}}}
}

// Version 10 replaces four indexes by ones that end in id, so the orders
// "time, id" of a detail's approvals, comments and attachments and
// "created_at, id" of a phase's list come from the index without a sort.
// On SQLite the approvals and comments indexes also carry every column the
// detail reads (one index page per contract instead of a table row per
// entry) and the phase index deleted_at (SQLite counts a column named only
// in a partial index's WHERE as missing from it). Postgres caps an index
// entry at about 2.7 kB, which a 4 000-character comment exceeds, so its
// indexes hold the keys only.
var (
	v10SQLite = []string{
		`DROP INDEX ix_contract_approvals_contract`,
		`CREATE INDEX ix_contract_approvals_thread ON contract_approvals
			(contract_id, approved_at, id, approver_user_id, from_phase, to_phase, decision, comment)`,
		`DROP INDEX ix_contract_comments_contract`,
		`CREATE INDEX ix_contract_comments_thread ON contract_comments (contract_id, created_at, id, author_id, phase, content)`,
		`DROP INDEX ix_contract_attachments_contract`,
		`CREATE INDEX ix_contract_attachments_thread ON contract_attachments (contract_id, created_at, id)`,
		`DROP INDEX ix_contracts_phase`,
		`CREATE INDEX ix_contracts_phase_created ON contracts (phase, created_at, id, deleted_at) WHERE deleted_at IS NULL`,
	}
	v10Postgres = []string{
		`DROP INDEX ix_contract_approvals_contract`,
		`CREATE INDEX ix_contract_approvals_thread ON contract_approvals (contract_id, approved_at, id)`,
		`DROP INDEX ix_contract_comments_contract`,
		`CREATE INDEX ix_contract_comments_thread ON contract_comments (contract_id, created_at, id)`,
		`DROP INDEX ix_contract_attachments_contract`,
		`CREATE INDEX ix_contract_attachments_thread ON contract_attachments (contract_id, created_at, id)`,
		`DROP INDEX ix_contracts_phase`,
		`CREATE INDEX ix_contracts_phase_created ON contracts (phase, created_at, id, deleted_at) WHERE deleted_at IS NULL`,
	}
)

// v5HistoryChain adds the columns of the workflow runtime's tamper-evident
// history (each approval's hash chained to the one before it, the head on
// the contract) and chains the approvals already stored, oldest first.
func v5HistoryChain(_ context.Context, tx *gorm.DB) error {
	for _, stmt := range []string{
		`ALTER TABLE contracts ADD COLUMN history_hash VARCHAR(64) NOT NULL DEFAULT ''`,
		`ALTER TABLE contract_approvals ADD COLUMN hash VARCHAR(64) NOT NULL DEFAULT ''`,
		`ALTER TABLE contract_approvals ADD COLUMN prev_hash VARCHAR(64) NOT NULL DEFAULT ''`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return err
		}
	}
	rows, err := tx.Raw(`SELECT id, contract_id, from_phase, to_phase, approver_user_id, decision, comment, approved_at
		FROM contract_approvals ORDER BY contract_id, approved_at, id`).Rows()
	if err != nil {
		return err
	}
	type chained struct{ id, contractID, hash, prev string }
	var out []chained
	prev, doc := "", ""
	for rows.Next() {
		var id string
		var l workflowdesigner.Link
		if err := rows.Scan(&id, &l.DocumentID, &l.From, &l.To, &l.ApproverID, &l.Decision, &l.Comment, &l.At); err != nil {
			_ = rows.Close()
			return err
		}
		if l.DocumentID != doc {
			doc, prev = l.DocumentID, ""
		}
		// Stored before the runtime truncated to microseconds: hash what
		// both engines give back.
		l.At = l.At.UTC().Truncate(time.Microsecond)
		h := l.Hash(prev)
		out = append(out, chained{id: id, contractID: doc, hash: h, prev: prev})
		prev = h
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for i, c := range out {
		if err := tx.Exec(`UPDATE contract_approvals SET hash = ?, prev_hash = ? WHERE id = ?`, c.hash, c.prev, c.id).Error; err != nil {
			return err
		}
		if i+1 == len(out) || out[i+1].contractID != c.contractID {
			if err := tx.Exec(`UPDATE contracts SET history_hash = ? WHERE id = ?`, c.hash, c.contractID).Error; err != nil {
				return err
			}
		}
	}
	return nil
}

// v4SearchText adds search_text (title and code, folded as platform/search
// folds: SQLite's LOWER knows only ASCII, so "hợp đồng" never found "HỢP
// ĐỒNG"), fills it for existing contracts and indexes it on Postgres.
func v4SearchText(_ context.Context, tx *gorm.DB) error {
	if err := tx.Exec(`ALTER TABLE contracts ADD COLUMN search_text TEXT NOT NULL DEFAULT ''`).Error; err != nil {
		return err
	}
	var rows []struct {
		ID, Title string
		MaHopDong *string
	}
	if err := tx.Raw(`SELECT id, title, ma_hop_dong FROM contracts`).Scan(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		if err := tx.Exec(`UPDATE contracts SET search_text = ? WHERE id = ?`, searchText(r.Title, r.MaHopDong), r.ID).Error; err != nil {
			return err
		}
	}
	return search.TrigramIndex(tx, "contracts")
}
