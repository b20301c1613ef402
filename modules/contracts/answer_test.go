package contracts_test

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestTransitionAnswerIsTheFreshDetail checks that a transition's answer,
// built from what the move wrote, is exactly the detail a GET returns
// right after it (for the same caller), on every move of a contract with
// comments, an attachment, a return and a generated code.
func TestTransitionAnswerIsTheFreshDetail(t *testing.T) {
	forEachDriver(t, func(t *testing.T, e *env) {
		drafter := e.user(t, "Drafter")
		pm := e.user(t, "ProjectManager")
		c := e.create(t, drafter.token, nil)
		if r := e.do("POST", "/api/contracts/"+c.ID+"/comments", drafter.token, map[string]any{"content": "Xin góp ý"}); r.Status != 201 {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
		if r := e.upload(t, drafter.token, c.ID, "ScannedSigned", "scan.pdf", pdfFile()); r.Status != 201 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		decode := func(what string, b []byte) map[string]any {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s: %v: %s", what, err, b)
			}
			return m
		}
		check := func(token, to, comment string) {
			t.Helper()
			r := e.move(token, c.ID, to, comment)
			if r.Status != 200 {
				t.Fatalf("move to %s: %d %s", to, r.Status, r.Body)
			}
			answer := decode("answer", r.Body)
			if _, ok := answer["warnings"]; ok {
				t.Fatalf("move to %s warned: %s", to, r.Body)
			}
			g := e.do("GET", "/api/contracts/"+c.ID, token, nil)
			if g.Status != 200 {
				t.Fatalf("get: %d %s", g.Status, g.Body)
			}
			if fresh := decode("get", g.Body); !reflect.DeepEqual(answer, fresh) {
				t.Fatalf("move to %s answered\n%s\nbut a GET right after says\n%s", to, r.Body, g.Body)
			}
		}
		check(drafter.token, DangDamPhan, "")
		check(e.admin, DangGopY, "")
		if r := e.do("POST", "/api/contracts/"+c.ID+"/comments", pm.token, map[string]any{"content": "Góp ý điều 5"}); r.Status != 201 {
			t.Fatalf("comment: %d %s", r.Status, r.Body)
		}
		check(e.admin, DangDamPhan, "Trả lại: sửa điều 5") // a return, with its comment
		for _, to := range []string{DangGopY, DangInKy, DangKiemTraCCM, DangTrinhKy, DangDongDau, DaPhatHanh} {
			check(e.admin, to, "")
		}
		if got := e.get(t, drafter.token, c.ID); got.code() == "" || len(got.Approvals) != 9 {
			t.Fatalf("after the path: code %q, %d approvals", got.code(), len(got.Approvals))
		}
	})
}
