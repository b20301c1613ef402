package core

import "github.com/contractflow/contractflow/platform/migrate"

// Migrations are frozen: append new ones, never edit these.
func Migrations() []migrate.Migration {
	return []migrate.Migration{{Version: 1, Name: "workflow definitions, steps, transitions, assignments", Up: migrate.SQL(
		`CREATE TABLE workflow_definitions (
			id VARCHAR(36) PRIMARY KEY,
			def_key VARCHAR(64) NOT NULL,
			version INTEGER NOT NULL,
			document_kind VARCHAR(32) NOT NULL,
			name VARCHAR(200) NOT NULL,
			status VARCHAR(16) NOT NULL,
			initial_phase VARCHAR(32) NOT NULL,
			created_at TIMESTAMP NOT NULL,
			created_by VARCHAR(36) NULL,
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL,
			published_at TIMESTAMP NULL,
			UNIQUE (def_key, version))`,
		`CREATE INDEX ix_workflow_definitions_kind ON workflow_definitions (document_kind, status)`,
		`CREATE TABLE workflow_steps (
			id VARCHAR(36) PRIMARY KEY,
			definition_id VARCHAR(36) NOT NULL REFERENCES workflow_definitions (id) ON DELETE CASCADE,
			phase VARCHAR(32) NOT NULL,
			sla_hours INTEGER NOT NULL,
			is_terminal BOOLEAN NOT NULL,
			sort_order INTEGER NOT NULL,
			UNIQUE (definition_id, phase))`,
		`CREATE TABLE workflow_step_approvers (
			step_id VARCHAR(36) NOT NULL REFERENCES workflow_steps (id) ON DELETE CASCADE,
			role VARCHAR(50) NOT NULL,
			PRIMARY KEY (step_id, role))`,
		`CREATE TABLE workflow_transitions (
			id VARCHAR(36) PRIMARY KEY,
			definition_id VARCHAR(36) NOT NULL REFERENCES workflow_definitions (id) ON DELETE CASCADE,
			from_phase VARCHAR(32) NOT NULL,
			to_phase VARCHAR(32) NOT NULL,
			kind VARCHAR(16) NOT NULL,
			guard VARCHAR(64) NULL,
			is_normal BOOLEAN NOT NULL,
			sort_order INTEGER NOT NULL)`,
		`CREATE INDEX ix_workflow_transitions_definition ON workflow_transitions (definition_id)`,
		`CREATE TABLE workflow_transition_roles (
			transition_id VARCHAR(36) NOT NULL REFERENCES workflow_transitions (id) ON DELETE CASCADE,
			role VARCHAR(50) NOT NULL,
			PRIMARY KEY (transition_id, role))`,
		`CREATE TABLE workflow_type_assignments (
			document_type VARCHAR(64) PRIMARY KEY,
			definition_id VARCHAR(36) NOT NULL REFERENCES workflow_definitions (id),
			updated_at TIMESTAMP NOT NULL,
			updated_by VARCHAR(36) NULL)`,
	)}, {Version: 2, Name: "preconditions of moves and the SLA breach policy of steps", Up: migrate.SQL(
		`ALTER TABLE workflow_transitions ADD COLUMN precondition VARCHAR(64) NOT NULL DEFAULT ''`,
		`ALTER TABLE workflow_steps ADD COLUMN on_sla_breach VARCHAR(16) NOT NULL DEFAULT 'advance'`,
	)}, {Version: 3, Name: "draft content as a document, and a revision to compare-and-set on", Up: migrate.SQL(
		// A draft may break every rule (a step twice, a role twice) until it
		// is published, which the step and transition tables' keys refuse:
		// its content is kept here as JSON, and initial_phase stays empty.
		// Publishing writes the rows and clears it.
		`ALTER TABLE workflow_definitions ADD COLUMN draft TEXT NULL`,
		// Every write of a definition adds one, so publishing can refuse
		// content that changed after it was validated.
		`ALTER TABLE workflow_definitions ADD COLUMN revision INTEGER NOT NULL DEFAULT 0`,
	)}, {Version: 4, Name: "live documents counted per kind, definition, phase and deadline", Up: migrate.PerDialect(
		// Kept by triggers the runtime puts on each kind's documents table
		// (runtime/counters.go); the inbox's and the in-flight plan's exact
		// counts read these rows instead of counting documents. On Postgres
		// a count is spread over stripes so concurrent moves do not queue
		// on one row; SQLite has one writer and uses stripe 0.
		[]string{`CREATE TABLE workflow_counts (
			kind VARCHAR(32) NOT NULL,
			definition_id VARCHAR(36) NOT NULL,
			phase VARCHAR(32) NOT NULL,
			dated SMALLINT NOT NULL,
			stripe SMALLINT NOT NULL,
			n BIGINT NOT NULL,
			PRIMARY KEY (kind, definition_id, phase, dated, stripe)) WITHOUT ROWID`},
		[]string{`CREATE TABLE workflow_counts (
			kind VARCHAR(32) NOT NULL,
			definition_id VARCHAR(36) NOT NULL,
			phase VARCHAR(32) NOT NULL,
			dated SMALLINT NOT NULL,
			stripe SMALLINT NOT NULL,
			n BIGINT NOT NULL,
			PRIMARY KEY (kind, definition_id, phase, dated, stripe))`,
			`CREATE FUNCTION workflow_count_add(k VARCHAR, d VARCHAR, p VARCHAR, dt SMALLINT, delta BIGINT) RETURNS void
			LANGUAGE sql AS $$
				INSERT INTO workflow_counts (kind, definition_id, phase, dated, stripe, n)
				VALUES (k, d, p, dt, (pg_backend_pid() % 16)::smallint, delta)
				ON CONFLICT (kind, definition_id, phase, dated, stripe) DO UPDATE SET n = workflow_counts.n + excluded.n
			$$`},
	)}, {Version: 5, Name: "the Postgres count function in PL/pgSQL", Up: migrate.PerDialect(nil,
		// A SQL function called from a trigger is parsed and planned again
		// on every call (its plan lives as long as the calling statement's
		// execution); PL/pgSQL keeps its plan for the session. Two calls per
		// move: pgbench, 4 clients, a PL/pgSQL caller making two calls per
		// transaction, 3 658–4 268 tps with the SQL function, 5 774 with this.
		[]string{`CREATE OR REPLACE FUNCTION workflow_count_add(k VARCHAR, d VARCHAR, p VARCHAR, dt SMALLINT, delta BIGINT)
			RETURNS void LANGUAGE plpgsql AS $$
			BEGIN
				INSERT INTO workflow_counts (kind, definition_id, phase, dated, stripe, n)
				VALUES (k, d, p, dt, (pg_backend_pid() % 16)::smallint, delta)
				ON CONFLICT (kind, definition_id, phase, dated, stripe) DO UPDATE SET n = workflow_counts.n + excluded.n;
			END $$`},
	)}}
}
