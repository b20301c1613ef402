package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Link is the content of one history row that its hash covers. The format
// is frozen: changing it would break every stored chain.
type Link struct {
	DocumentID string
	From, To   string
	ApproverID *string
	Decision   string
	Comment    string
	At         time.Time
}

// Hash is the row's hash chained to the previous row's hash of the same
// document ("" for the first): SHA-256 over length-prefixed fields, so no
// two different rows encode alike.
func (l Link) Hash(prev string) string {
	h := sha256.New()
	approver := ""
	if l.ApproverID != nil {
		approver = "u:" + *l.ApproverID
	}
	for _, f := range []string{prev, l.DocumentID, l.From, l.To, approver, l.Decision, l.Comment,
		l.At.UTC().Format("2006-01-02T15:04:05.000000Z")} {
		h.Write([]byte(strconv.Itoa(len(f))))
		h.Write([]byte{':'})
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// HistoryRow is one stored history row as verification reads it.
type HistoryRow struct {
	ID       string
	Link     Link
	Hash     string
	PrevHash string
}

// Broken names the first history row that no longer matches its chain.
type Broken struct {
	Kind, Table, DocumentID, RowID, Reason string
}

func (b Broken) Error() string {
	if b.RowID == "" {
		return fmt.Sprintf("%s %s: %s", b.Kind, b.DocumentID, b.Reason)
	}
	return fmt.Sprintf("%s %s: %s row %s %s", b.Kind, b.DocumentID, b.Table, b.RowID, b.Reason)
}

// Verify checks every registered kind's history chains: each row's hash
// matches its content and the row before it, and each document's newest
// row is the one it points to. It reports the number of rows checked and
// the first break (nil when every chain holds).
func (r *Runtime) Verify(ctx context.Context, progress io.Writer) (int, *Broken, error) {
	total := 0
	for _, k := range r.Kinds() {
		heads, err := r.store().heads(ctx, k.Tables)
		if err != nil {
			return total, nil, err
		}
		var (
			doc  string
			rows []HistoryRow
			bad  *Broken
		)
		check := func() {
			if doc != "" && bad == nil {
				bad = verifyChain(k, doc, rows, heads[doc])
				delete(heads, doc)
			}
		}
		n, err := r.store().eachHistory(ctx, k.Tables, func(docID string, row HistoryRow) bool {
			if docID != doc {
				check()
				doc, rows = docID, rows[:0]
			}
			rows = append(rows, row)
			return bad == nil
		})
		if err != nil {
			return total, nil, err
		}
		check()
		total += n
		if bad == nil {
			// A document pointing at a history it no longer has.
			for id, head := range heads {
				if head != "" {
					bad = &Broken{Kind: k.Name, Table: k.Tables.History, DocumentID: id, Reason: "has no history rows, but its chain head says it has"}
					break
				}
			}
		}
		if bad != nil {
			return total, bad, nil
		}
		fmt.Fprintf(progress, "%s: %d history rows verified\n", k.Name, n)
	}
	return total, nil, nil
}

// verifyChain walks one document's rows from the first (prev_hash "") by
// their links; rows arrive in time order, which names the earliest break.
func verifyChain(k Kind, doc string, rows []HistoryRow, head string) *Broken {
	broken := func(row, reason string) *Broken {
		return &Broken{Kind: k.Name, Table: k.Tables.History, DocumentID: doc, RowID: row, Reason: reason}
	}
	next := make(map[string]int, len(rows))
	for i, row := range rows {
		next[row.PrevHash] = i
	}
	seen := make([]bool, len(rows))
	prev := ""
	for range rows {
		i, ok := next[prev]
		if !ok || seen[i] {
			break
		}
		seen[i] = true
		if got := rows[i].Link.Hash(prev); got != rows[i].Hash {
			return broken(rows[i].ID, "does not match its content")
		}
		prev = rows[i].Hash
	}
	for i, s := range seen {
		if !s {
			return broken(rows[i].ID, "is not linked to the row before it")
		}
	}
	if prev != head {
		return &Broken{Kind: k.Name, Table: k.Tables.History, DocumentID: doc, Reason: "its newest history row is missing or was replaced"}
	}
	return nil
}
