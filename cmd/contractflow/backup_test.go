package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/contractflow/contractflow/platform/cli"
	"github.com/contractflow/contractflow/platform/kernel"
	"github.com/contractflow/contractflow/platform/testkit"
)

// written is one contract the load wrote completely: created, moved once
// (a history row) and given an attachment.
type written struct {
	id, attachment string
	sum            [32]byte
}

// TestBackupUnderWriteLoadRestoresEverything backs a node up while it takes
// writes, restores the archive into a new folder and starts a node on it:
// every contract finished before the backup began is there with its history
// and its attachment, byte for byte; and every attachment the restored
// database refers to is there (the snapshot and the files agree).
func TestBackupUnderWriteLoadRestoresEverything(t *testing.T) {
	set := testkit.Isolated(t, "sqlite")
	srv := serve(t, set)
	admin := srv.login(t, "admin@contractflow.local", "ChangeMe-Admin-2026")
	var sup, prj struct{ ID string }
	admin.json("POST", "/api/suppliers", map[string]any{"code": "NCC-HP", "name": "Thép Hòa Phát", "supplierType": "Material", "taxCode": "0900189284"}, 201, &sup)
	admin.json("POST", "/api/projects", map[string]any{"code": "DA100", "name": "Chung cư An Phú", "status": "Active"}, 201, &prj)

	var (
		mu    sync.Mutex
		done  []written
		stop  = make(chan struct{})
		wg    sync.WaitGroup
		ready = make(chan struct{})
	)
	writeOne := func(n int) (written, error) {
		var c struct{ ID string }
		if err := admin.tryJSON("POST", "/api/contracts", map[string]any{"title": fmt.Sprintf("Hợp đồng %d", n), "contractType": "Subcontract",
			"supplierId": sup.ID, "projectId": prj.ID, "value": 1_000_000 * (n + 1)}, 201, &c); err != nil {
			return written{}, err
		}
		if err := admin.tryJSON("POST", "/api/contracts/"+c.ID+"/transitions", map[string]any{"toPhase": "DangDamPhan"}, 200, nil); err != nil {
			return written{}, err
		}
		data := pdf(n)
		att, err := admin.upload(c.ID, fmt.Sprintf("signed-%d.pdf", n), data)
		return written{id: c.ID, attachment: att, sum: sha256.Sum256(data)}, err
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			w, err := writeOne(n)
			if err != nil {
				t.Errorf("write load: %v", err)
				return
			}
			mu.Lock()
			done = append(done, w)
			if len(done) == 10 {
				close(ready)
			}
			mu.Unlock()
		}
	}()
	<-ready
	mu.Lock()
	before := append([]written(nil), done...)
	mu.Unlock()

	archive := filepath.Join(t.TempDir(), "node.tar.gz")
	opts := kernel.Options{Set: map[string]any{"database.dsn": set["database.dsn"], "storage.path": set["storage.path"]}, Environ: []string{}}
	var out bytes.Buffer
	if err := cli.Run(context.Background(), opts, []string{"backup", "--to", archive}, &out); err != nil {
		t.Fatalf("backup: %v", err)
	}
	close(stop)
	wg.Wait()
	mu.Lock()
	during := len(done) - len(before)
	mu.Unlock()
	t.Logf("%s(%d contracts written before the backup, %d during or after it)", out.String(), len(before), during)

	// Restore refuses a folder that is not empty, such as the live one.
	if err := cli.Run(context.Background(), opts, []string{"restore", "--from", archive, "--to", filepath.Dir(set["database.dsn"].(string))}, &out); err == nil ||
		!strings.Contains(err.Error(), "restore into a new, empty folder") {
		t.Fatalf("restore over the live folder: %v, want a refusal", err)
	}
	to := filepath.Join(t.TempDir(), "restored")
	out.Reset()
	if err := cli.Run(context.Background(), opts, []string{"restore", "--from", archive, "--to", to}, &out); err != nil {
		t.Fatalf("restore: %v", err)
	}
	if !strings.Contains(out.String(), "every checksum matched") {
		t.Errorf("restore said %q", out.String())
	}

	restored := testkit.Isolated(t, "sqlite")
	restored["database.dsn"] = filepath.Join(to, "contractflow.db")
	restored["storage.path"] = filepath.Join(to, "files")
	node := serve(t, restored)
	c := node.login(t, "admin@contractflow.local", "ChangeMe-Admin-2026")
	type detail struct {
		Approvals   []struct{ ID string } `json:"approvals"`
		Attachments []struct{ ID string } `json:"attachments"`
	}
	checkAttachment := func(contract, att string, want *[32]byte) {
		code, body, err := c.do("GET", "/api/contracts/"+contract+"/attachments/"+att, "", nil)
		if err != nil || code != 200 {
			t.Errorf("contract %s attachment %s: status %d, err %v", contract, att, code, err)
			return
		}
		if want != nil && sha256.Sum256(body) != *want {
			t.Errorf("contract %s attachment %s: checksum differs after restore", contract, att)
		}
	}
	for _, w := range before {
		var d detail
		c.json("GET", "/api/contracts/"+w.id, nil, 200, &d)
		if len(d.Approvals) != 1 {
			t.Errorf("contract %s: %d history rows, want 1 (its move)", w.id, len(d.Approvals))
		}
		if len(d.Attachments) != 1 || d.Attachments[0].ID != w.attachment {
			t.Errorf("contract %s: attachments %v, want %s", w.id, d.Attachments, w.attachment)
			continue
		}
		checkAttachment(w.id, w.attachment, &w.sum)
	}
	// Whatever else the snapshot holds is whole: each attachment it names exists.
	var list struct {
		Items []struct{ ID string } `json:"items"`
	}
	c.json("GET", "/api/contracts?pageSize=100", nil, 200, &list)
	if len(list.Items) < len(before) {
		t.Errorf("restored node lists %d contracts, want at least %d", len(list.Items), len(before))
	}
	for _, it := range list.Items {
		var d detail
		c.json("GET", "/api/contracts/"+it.ID, nil, 200, &d)
		for _, a := range d.Attachments {
			checkAttachment(it.ID, a.ID, nil)
		}
	}
	if _, err := os.Stat(filepath.Join(to, "files")); err != nil {
		t.Error(err)
	}
}
