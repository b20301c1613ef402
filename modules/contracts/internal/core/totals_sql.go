package core

// The SQL of migration 8 (frozen, like every migration): contract_totals
// holds the dashboard's figures as counts and value sums per bucket, kept
// by triggers in the transaction of every write to contracts and
// contract_approvals, whoever writes (the service, the workflow runtime's
// moves and SLA job, a bulk load in SQL). Buckets (dim, bucket):
//
//	phase     a phase          live contracts
//	supplier  a supplier id    live contracts not in TuChoi
//	project   a project id     live contracts not in TuChoi that name one
//	cday      "2006-01-02"     live contracts created that UTC day
//	chour     "2006-01-02 15"  live contracts created that UTC hour
//	pday      "2006-01-02"     entries into DaPhatHanh that UTC day (n only)
//	phour     "2006-01-02 15"  entries into DaPhatHanh that UTC hour
//
// A published contract can no longer be deleted, so an entry into
// DaPhatHanh stays counted. On Postgres each count is spread over 16 rows
// (stripe = the backend's pid mod 16) so that concurrent writers do not
// queue on one row, and a change of two buckets of one dimension takes
// them in key order so that two writers on one stripe cannot deadlock.

var totalsSQLite = []string{
	`CREATE TABLE contract_totals (
		dim VARCHAR(8) NOT NULL,
		bucket VARCHAR(36) NOT NULL,
		stripe SMALLINT NOT NULL,
		n BIGINT NOT NULL,
		value BIGINT NOT NULL,
		PRIMARY KEY (dim, bucket, stripe)) WITHOUT ROWID`,
	`CREATE TRIGGER contracts_totals_insert AFTER INSERT ON contracts WHEN NEW.deleted_at IS NULL BEGIN
		` + sqliteTotals("NEW", "1") + `
	END`,
	`CREATE TRIGGER contracts_totals_delete AFTER DELETE ON contracts WHEN OLD.deleted_at IS NULL BEGIN
		` + sqliteTotals("OLD", "-1") + `
	END`,
	// Three update triggers, so that a move (a phase change) touches only
	// the two phase buckets.
	`CREATE TRIGGER contracts_totals_phase AFTER UPDATE OF phase, value, deleted_at ON contracts
	WHEN (NEW.deleted_at IS NULL) <> (OLD.deleted_at IS NULL) OR NEW.phase <> OLD.phase OR NEW.value <> OLD.value BEGIN
		` + sqliteAdd("'phase'", "OLD.phase", "OLD", "-1", "") + `
		` + sqliteAdd("'phase'", "NEW.phase", "NEW", "1", "") + `
	END`,
	`CREATE TRIGGER contracts_totals_group AFTER UPDATE OF phase, value, deleted_at, supplier_id, project_id ON contracts
	WHEN (NEW.deleted_at IS NULL) <> (OLD.deleted_at IS NULL) OR (NEW.phase = 'TuChoi') <> (OLD.phase = 'TuChoi')
		OR NEW.value <> OLD.value OR NEW.supplier_id <> OLD.supplier_id OR NEW.project_id IS NOT OLD.project_id BEGIN
		` + sqliteAdd("'supplier'", "OLD.supplier_id", "OLD", "-1", "OLD.phase <> 'TuChoi'") + `
		` + sqliteAdd("'project'", "OLD.project_id", "OLD", "-1", "OLD.phase <> 'TuChoi' AND OLD.project_id IS NOT NULL") + `
		` + sqliteAdd("'supplier'", "NEW.supplier_id", "NEW", "1", "NEW.phase <> 'TuChoi'") + `
		` + sqliteAdd("'project'", "NEW.project_id", "NEW", "1", "NEW.phase <> 'TuChoi' AND NEW.project_id IS NOT NULL") + `
	END`,
	`CREATE TRIGGER contracts_totals_created AFTER UPDATE OF value, deleted_at, created_at ON contracts
	WHEN (NEW.deleted_at IS NULL) <> (OLD.deleted_at IS NULL) OR NEW.value <> OLD.value OR NEW.created_at <> OLD.created_at BEGIN
		` + sqliteAdd("'cday'", "strftime('%Y-%m-%d', OLD.created_at)", "OLD", "-1", "") + `
		` + sqliteAdd("'chour'", "strftime('%Y-%m-%d %H', OLD.created_at)", "OLD", "-1", "") + `
		` + sqliteAdd("'cday'", "strftime('%Y-%m-%d', NEW.created_at)", "NEW", "1", "") + `
		` + sqliteAdd("'chour'", "strftime('%Y-%m-%d %H', NEW.created_at)", "NEW", "1", "") + `
	END`,
	`CREATE TRIGGER contract_approvals_totals AFTER INSERT ON contract_approvals
	WHEN NEW.to_phase = 'DaPhatHanh' AND NEW.from_phase <> 'DaPhatHanh' BEGIN
		INSERT INTO contract_totals (dim, bucket, stripe, n, value) VALUES ('pday', strftime('%Y-%m-%d', NEW.approved_at), 0, 1, 0)
			ON CONFLICT (dim, bucket, stripe) DO UPDATE SET n = n + 1;
		INSERT INTO contract_totals (dim, bucket, stripe, n, value) VALUES ('phour', strftime('%Y-%m-%d %H', NEW.approved_at), 0, 1, 0)
			ON CONFLICT (dim, bucket, stripe) DO UPDATE SET n = n + 1;
	END`,
	`INSERT INTO contract_totals (dim, bucket, stripe, n, value)
		SELECT 'phase', phase, 0, COUNT(*), SUM(value) FROM contracts WHERE deleted_at IS NULL GROUP BY phase
		UNION ALL SELECT 'supplier', supplier_id, 0, COUNT(*), SUM(value) FROM contracts
			WHERE deleted_at IS NULL AND phase <> 'TuChoi' GROUP BY supplier_id
		UNION ALL SELECT 'project', project_id, 0, COUNT(*), SUM(value) FROM contracts
			WHERE deleted_at IS NULL AND phase <> 'TuChoi' AND project_id IS NOT NULL GROUP BY project_id
		UNION ALL SELECT 'cday', strftime('%Y-%m-%d', created_at), 0, COUNT(*), SUM(value) FROM contracts
			WHERE deleted_at IS NULL GROUP BY strftime('%Y-%m-%d', created_at)
		UNION ALL SELECT 'chour', strftime('%Y-%m-%d %H', created_at), 0, COUNT(*), SUM(value) FROM contracts
			WHERE deleted_at IS NULL GROUP BY strftime('%Y-%m-%d %H', created_at)
		UNION ALL SELECT 'pday', strftime('%Y-%m-%d', approved_at), 0, COUNT(*), 0 FROM contract_approvals
			WHERE to_phase = 'DaPhatHanh' AND from_phase <> 'DaPhatHanh' GROUP BY strftime('%Y-%m-%d', approved_at)
		UNION ALL SELECT 'phour', strftime('%Y-%m-%d %H', approved_at), 0, COUNT(*), 0 FROM contract_approvals
			WHERE to_phase = 'DaPhatHanh' AND from_phase <> 'DaPhatHanh' GROUP BY strftime('%Y-%m-%d %H', approved_at)`,
}

// sqliteTotals adds (delta "1") or takes away ("-1") every bucket of a live row.
func sqliteTotals(row, delta string) string {
	return sqliteAdd("'phase'", row+".phase", row, delta, "") +
		sqliteAdd("'supplier'", row+".supplier_id", row, delta, row+".phase <> 'TuChoi'") +
		sqliteAdd("'project'", row+".project_id", row, delta, row+".phase <> 'TuChoi' AND "+row+".project_id IS NOT NULL") +
		sqliteAdd("'cday'", "strftime('%Y-%m-%d', "+row+".created_at)", row, delta, "") +
		sqliteAdd("'chour'", "strftime('%Y-%m-%d %H', "+row+".created_at)", row, delta, "")
}

// sqliteAdd is one bucket's change when row is live (and cond holds).
func sqliteAdd(dim, bucket, row, delta, cond string) string {
	return sqliteAddValue(dim, bucket, row, delta, delta+" * "+row+".value", cond)
}

func sqliteAddValue(dim, bucket, row, delta, value, cond string) string {
	where := row + ".deleted_at IS NULL"
	if cond != "" {
		where += " AND " + cond
	}
	return `INSERT INTO contract_totals (dim, bucket, stripe, n, value)
		SELECT ` + dim + `, ` + bucket + `, 0, ` + delta + `, ` + value + ` WHERE ` + where + `
		ON CONFLICT (dim, bucket, stripe) DO UPDATE SET n = n + excluded.n, value = value + excluded.value;`
}

var totalsPostgres = []string{
	`CREATE TABLE contract_totals (
		dim VARCHAR(8) NOT NULL,
		bucket VARCHAR(36) NOT NULL,
		stripe SMALLINT NOT NULL,
		n BIGINT NOT NULL,
		value BIGINT NOT NULL,
		PRIMARY KEY (dim, bucket, stripe))`,
	`CREATE FUNCTION contract_total_add(d VARCHAR, b VARCHAR, dn BIGINT, dv BIGINT) RETURNS void LANGUAGE sql AS $$
		INSERT INTO contract_totals (dim, bucket, stripe, n, value) VALUES (d, b, (pg_backend_pid() % 16)::smallint, dn, dv)
		ON CONFLICT (dim, bucket, stripe) DO UPDATE SET n = contract_totals.n + excluded.n, value = contract_totals.value + excluded.value
	$$`,
	// One row leaves bucket ob (NULL: none) and enters nb, in key order.
	`CREATE FUNCTION contract_total_move(d VARCHAR, ob VARCHAR, ov BIGINT, nb VARCHAR, nv BIGINT) RETURNS void LANGUAGE plpgsql AS $$
	BEGIN
		IF ob IS NOT DISTINCT FROM nb AND ov IS NOT DISTINCT FROM nv THEN RETURN; END IF;
		IF ob IS NOT NULL AND (nb IS NULL OR ob <= nb) THEN PERFORM contract_total_add(d, ob, -1, -ov); END IF;
		IF nb IS NOT NULL THEN PERFORM contract_total_add(d, nb, 1, nv); END IF;
		IF ob IS NOT NULL AND nb IS NOT NULL AND ob > nb THEN PERFORM contract_total_add(d, ob, -1, -ov); END IF;
	END $$`,
	`CREATE FUNCTION contracts_totals() RETURNS trigger LANGUAGE plpgsql AS $$
	DECLARE
		o BOOLEAN := TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL;
		nw BOOLEAN := TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL;
		og BOOLEAN := o AND OLD.phase <> 'TuChoi';
		ng BOOLEAN := nw AND NEW.phase <> 'TuChoi';
	BEGIN
		PERFORM contract_total_move('phase', CASE WHEN o THEN OLD.phase END, CASE WHEN o THEN OLD.value END,
			CASE WHEN nw THEN NEW.phase END, CASE WHEN nw THEN NEW.value END);
		PERFORM contract_total_move('supplier', CASE WHEN og THEN OLD.supplier_id END, CASE WHEN og THEN OLD.value END,
			CASE WHEN ng THEN NEW.supplier_id END, CASE WHEN ng THEN NEW.value END);
		PERFORM contract_total_move('project', CASE WHEN og THEN OLD.project_id END, CASE WHEN og THEN OLD.value END,
			CASE WHEN ng THEN NEW.project_id END, CASE WHEN ng THEN NEW.value END);
		PERFORM contract_total_move('cday', CASE WHEN o THEN to_char(OLD.created_at, 'YYYY-MM-DD') END, CASE WHEN o THEN OLD.value END,
			CASE WHEN nw THEN to_char(NEW.created_at, 'YYYY-MM-DD') END, CASE WHEN nw THEN NEW.value END);
		PERFORM contract_total_move('chour', CASE WHEN o THEN to_char(OLD.created_at, 'YYYY-MM-DD HH24') END, CASE WHEN o THEN OLD.value END,
			CASE WHEN nw THEN to_char(NEW.created_at, 'YYYY-MM-DD HH24') END, CASE WHEN nw THEN NEW.value END);
		RETURN NULL;
	END $$`,
	`CREATE TRIGGER contracts_totals AFTER INSERT OR DELETE OR UPDATE OF phase, value, deleted_at, supplier_id, project_id, created_at
		ON contracts FOR EACH ROW EXECUTE FUNCTION contracts_totals()`,
	`CREATE FUNCTION contract_approvals_totals() RETURNS trigger LANGUAGE plpgsql AS $$
	BEGIN
		PERFORM contract_total_add('pday', to_char(NEW.approved_at, 'YYYY-MM-DD'), 1, 0);
		PERFORM contract_total_add('phour', to_char(NEW.approved_at, 'YYYY-MM-DD HH24'), 1, 0);
		RETURN NULL;
	END $$`,
	`CREATE TRIGGER contract_approvals_totals AFTER INSERT ON contract_approvals FOR EACH ROW
		WHEN (NEW.to_phase = 'DaPhatHanh' AND NEW.from_phase <> 'DaPhatHanh') EXECUTE FUNCTION contract_approvals_totals()`,
	`INSERT INTO contract_totals (dim, bucket, stripe, n, value)
		SELECT 'phase', phase, 0, COUNT(*), SUM(value) FROM contracts WHERE deleted_at IS NULL GROUP BY phase
		UNION ALL SELECT 'supplier', supplier_id, 0, COUNT(*), SUM(value) FROM contracts
			WHERE deleted_at IS NULL AND phase <> 'TuChoi' GROUP BY supplier_id
		UNION ALL SELECT 'project', project_id, 0, COUNT(*), SUM(value) FROM contracts
			WHERE deleted_at IS NULL AND phase <> 'TuChoi' AND project_id IS NOT NULL GROUP BY project_id
		UNION ALL SELECT 'cday', to_char(created_at, 'YYYY-MM-DD'), 0, COUNT(*), SUM(value) FROM contracts
			WHERE deleted_at IS NULL GROUP BY 2
		UNION ALL SELECT 'chour', to_char(created_at, 'YYYY-MM-DD HH24'), 0, COUNT(*), SUM(value) FROM contracts
			WHERE deleted_at IS NULL GROUP BY 2
		UNION ALL SELECT 'pday', to_char(approved_at, 'YYYY-MM-DD'), 0, COUNT(*), 0 FROM contract_approvals
			WHERE to_phase = 'DaPhatHanh' AND from_phase <> 'DaPhatHanh' GROUP BY 2
		UNION ALL SELECT 'phour', to_char(approved_at, 'YYYY-MM-DD HH24'), 0, COUNT(*), 0 FROM contract_approvals
			WHERE to_phase = 'DaPhatHanh' AND from_phase <> 'DaPhatHanh' GROUP BY 2`,
}

// The SQL of migration 9 (frozen): live contracts that have a deadline,
// per phase and UTC day or hour of the deadline, so that the overdue count
// of a phase is a sum of the buckets before now plus the rows of the
// current hour, exact at the moment of the request without counting every
// overdue contract:
//
//	dday   "DangGopY 2006-01-02"     (n only)
//	dhour  "DangGopY 2006-01-02 15"  (n only)

var deadlinesSQLite = []string{
	`CREATE TRIGGER contracts_deadlines_insert AFTER INSERT ON contracts
	WHEN NEW.deleted_at IS NULL AND NEW.sla_deadline IS NOT NULL BEGIN
		` + sqliteDeadline("NEW", "1") + `
	END`,
	`CREATE TRIGGER contracts_deadlines_delete AFTER DELETE ON contracts
	WHEN OLD.deleted_at IS NULL AND OLD.sla_deadline IS NOT NULL BEGIN
		` + sqliteDeadline("OLD", "-1") + `
	END`,
	`CREATE TRIGGER contracts_deadlines_update AFTER UPDATE OF phase, sla_deadline, deleted_at ON contracts
	WHEN (NEW.deleted_at IS NULL) <> (OLD.deleted_at IS NULL) OR NEW.phase <> OLD.phase OR NEW.sla_deadline IS NOT OLD.sla_deadline BEGIN
		` + sqliteDeadline("OLD", "-1") + `
		` + sqliteDeadline("NEW", "1") + `
	END`,
	`INSERT INTO contract_totals (dim, bucket, stripe, n, value)
		SELECT 'dday', phase || ' ' || strftime('%Y-%m-%d', sla_deadline), 0, COUNT(*), 0 FROM contracts
			WHERE deleted_at IS NULL AND sla_deadline IS NOT NULL GROUP BY phase, strftime('%Y-%m-%d', sla_deadline)
		UNION ALL SELECT 'dhour', phase || ' ' || strftime('%Y-%m-%d %H', sla_deadline), 0, COUNT(*), 0 FROM contracts
			WHERE deleted_at IS NULL AND sla_deadline IS NOT NULL GROUP BY phase, strftime('%Y-%m-%d %H', sla_deadline)`,
}

// sqliteDeadline is the change of a row's two deadline buckets when it is
// live and has a deadline.
func sqliteDeadline(row, delta string) string {
	cond := row + ".sla_deadline IS NOT NULL"
	return sqliteAddValue("'dday'", row+".phase || ' ' || strftime('%Y-%m-%d', "+row+".sla_deadline)", row, delta, "0", cond) +
		sqliteAddValue("'dhour'", row+".phase || ' ' || strftime('%Y-%m-%d %H', "+row+".sla_deadline)", row, delta, "0", cond)
}

var deadlinesPostgres = []string{
	`CREATE FUNCTION contracts_deadlines() RETURNS trigger LANGUAGE plpgsql AS $$
	DECLARE
		o BOOLEAN := TG_OP <> 'INSERT' AND OLD.deleted_at IS NULL AND OLD.sla_deadline IS NOT NULL;
		nw BOOLEAN := TG_OP <> 'DELETE' AND NEW.deleted_at IS NULL AND NEW.sla_deadline IS NOT NULL;
	BEGIN
		PERFORM contract_total_move('dday', CASE WHEN o THEN OLD.phase || ' ' || to_char(OLD.sla_deadline, 'YYYY-MM-DD') END, 0,
			CASE WHEN nw THEN NEW.phase || ' ' || to_char(NEW.sla_deadline, 'YYYY-MM-DD') END, 0);
		PERFORM contract_total_move('dhour', CASE WHEN o THEN OLD.phase || ' ' || to_char(OLD.sla_deadline, 'YYYY-MM-DD HH24') END, 0,
			CASE WHEN nw THEN NEW.phase || ' ' || to_char(NEW.sla_deadline, 'YYYY-MM-DD HH24') END, 0);
		RETURN NULL;
	END $$`,
	`CREATE TRIGGER contracts_deadlines AFTER INSERT OR DELETE OR UPDATE OF phase, sla_deadline, deleted_at
		ON contracts FOR EACH ROW EXECUTE FUNCTION contracts_deadlines()`,
	`INSERT INTO contract_totals (dim, bucket, stripe, n, value)
		SELECT 'dday', phase || ' ' || to_char(sla_deadline, 'YYYY-MM-DD'), 0, COUNT(*), 0 FROM contracts
			WHERE deleted_at IS NULL AND sla_deadline IS NOT NULL GROUP BY 2
		UNION ALL SELECT 'dhour', phase || ' ' || to_char(sla_deadline, 'YYYY-MM-DD HH24'), 0, COUNT(*), 0 FROM contracts
			WHERE deleted_at IS NULL AND sla_deadline IS NOT NULL GROUP BY 2`,
}
