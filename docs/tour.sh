#!/usr/bin/env bash
# The API tour of the README, as a script: every call is `curl -fsS`, so the
# first failure stops the tour with curl's error. It needs bash, curl, jq and
# unzip, and a running service with the seeded administrator:
#
#   make run                       # in one terminal
#   docs/tour.sh                   # in another; API=http://host:port docs/tour.sh elsewhere
#
# It ends with a contract published, an attachment uploaded and downloaded,
# a rendered document with no placeholder left, and the dashboard. Files it
# writes go to a temporary folder (TOUR_DIR to keep them).
set -euo pipefail

API=${API:-http://localhost:8080}
ADMIN_EMAIL=${ADMIN_EMAIL:-admin@contractflow.local}
ADMIN_PASSWORD=${ADMIN_PASSWORD:-ChangeMe-Admin-2026}
DIR=${TOUR_DIR:-$(mktemp -d)}
RUN=$(date +%s%N | tail -c 7)   # codes stay unique when the tour runs again
step() { printf '\n== %s\n' "$*"; }
json() { curl -fsS -H "$H" -H 'Content-Type: application/json' "$@"; }

step "Sign in (5 attempts per minute per IP; 5 failures lock the account for 15 minutes)"
TOKENS=$(curl -fsS -X POST "$API/api/auth/login" -H 'Content-Type: application/json' \
  -d "{\"email\":\"$ADMIN_EMAIL\",\"password\":\"$ADMIN_PASSWORD\"}")
AT=$(jq -r .accessToken <<<"$TOKENS")
RT=$(jq -r .refreshToken <<<"$TOKENS")
H="Authorization: Bearer $AT"

step "Who am I, and what may I do?"
curl -fsS "$API/api/auth/me" -H "$H" | jq -c '{email, roles}'
curl -fsS "$API/api/menus/me" -H "$H" | jq -c '[.[].key]'

step "Rotate the refresh token (reusing an old one revokes the whole sign-in)"
TOKENS=$(curl -fsS -X POST "$API/api/auth/refresh" -H 'Content-Type: application/json' -d "{\"refreshToken\":\"$RT\"}")
AT=$(jq -r .accessToken <<<"$TOKENS")
H="Authorization: Bearer $AT"

step "Users"
ID=$(json -X POST "$API/api/users" \
  -d "{\"email\":\"lan$RUN@example.com\",\"fullName\":\"Nguyễn Thị Lan\",\"password\":\"a-good-password-1\",\"roles\":[\"Drafter\"]}" | jq -r .id)
curl -fsS "$API/api/users?search=lan&role=Drafter&sort=-createdAt&page=1&pageSize=20" -H "$H" | jq -c '{total: .totalCount}'
json -X PUT "$API/api/users/$ID/roles" -d '{"roles":["Drafter","DeptManager"]}' >/dev/null
curl -fsS -X POST "$API/api/users/$ID/unlock" -H "$H" >/dev/null

step "Roles and the permission matrix (changes apply on the next request, on every node)"
curl -fsS "$API/api/roles" -H "$H" | jq -c '[.[].name]'
curl -fsS "$API/api/permissions?role=Drafter" -H "$H" >/dev/null
json -X PUT "$API/api/permissions" \
  -d '{"role":"Drafter","menuKey":"Users","canRead":true,"canCreate":false,"canUpdate":false,"canDelete":false}' >/dev/null

step "Master data (suppliers: 5 types; codes unique among live records)"
SUP=$(json -X POST "$API/api/suppliers" \
  -d "{\"code\":\"NCC-HP-$RUN\",\"name\":\"Công ty CP Thép Hòa Phát\",\"supplierType\":\"Material\",\"taxCode\":\"0900189284\"}" | jq -r .id)
PRJ=$(json -X POST "$API/api/projects" \
  -d "{\"code\":\"DA$RUN\",\"name\":\"Chung cư An Phú\",\"status\":\"Active\"}" | jq -r .id)
curl -fsS "$API/api/suppliers?search=thep&supplierType=Material&sort=-createdAt" -H "$H" | jq -c '[.items[].code]'

step "Templates: pick one, fill every field of its fieldSpec, render a real .docx"
TEMPLATE_JSON=$(curl -fsS "$API/api/forms/templates?contractType=Subcontract&onlyActive=true" -H "$H" | jq '.items[0]')
TEMPLATE=$(jq -r .id <<<"$TEMPLATE_JSON")
VALUES=$(jq '[.fieldSpec[] | {key: .name, value: (
    if .type == "number" or .type == "money" then 1500000000
    elif .type == "date" then "2026-12-01"
    else "Mẫu " + .label end)}] | from_entries' <<<"$TEMPLATE_JSON")
VALUES=$(jq '. + {partyAName: "Công ty Xây dựng ABC", partyBName: "Thép Hòa Phát", contractValue: 1500000000}' <<<"$VALUES")
json -X POST "$API/api/forms/templates/$TEMPLATE/render" -d "$VALUES" -o "$DIR/contract.docx"
LEFT=$(unzip -p "$DIR/contract.docx" 'word/*.xml' | sed -e 's/<[^>]*>//g' | grep -o '{{[^}]*}}' || true)
if [ -n "$LEFT" ]; then echo "placeholders left in the rendered document: $LEFT" >&2; exit 1; fi
echo "rendered $DIR/contract.docx: no placeholder left"

step "A budget for the project: one line, approved (planned amounts then change only through adjustments)"
BUD=$(json -X POST "$API/api/budgets" \
  -d "{\"code\":\"NS-$RUN\",\"name\":\"Ngân sách Chung cư An Phú\",\"projectId\":\"$PRJ\",\"fiscalYear\":2026,\"onExceed\":\"Block\"}" | jq -r .id)
LINE=$(json -X POST "$API/api/budgets/$BUD/lines" -d '{"code":"TP","name":"Thầu phụ","plannedAmount":1800000000}' | jq -r .id)
json -X POST "$API/api/budgets/$BUD/approve" | jq -c '{status, plannedTotal}'
json -X POST "$API/api/budgets/$BUD/lines/$LINE/adjustments" -d '{"delta":200000000,"reason":"Bổ sung cọc"}' | jq -c '{delta, planned: .line.plannedAmount}'

step "A contract on that budget line: draft, return once, comment, move through all seven steps to published"
C=$(json -X POST "$API/api/contracts" \
  -d "{\"title\":\"Hợp đồng thầu phụ cọc khoan nhồi\",\"contractType\":\"Subcontract\",\"supplierId\":\"$SUP\",\"projectId\":\"$PRJ\",\"value\":1500000000,\"budgetLineId\":\"$LINE\",\"templateId\":\"$TEMPLATE\",\"draftData\":$VALUES}" \
  | jq -r .id)
move() { json -X POST "$API/api/contracts/$C/transitions" -d "$1" | jq -r '"moved to " + .phase'; }
move '{"toPhase":"DangDamPhan"}'
move '{"toPhase":"DangSoanThao","comment":"Thiếu điều khoản bảo hành"}'   # a return needs a comment
json -X POST "$API/api/contracts/$C/comments" -d '{"content":"Đã bổ sung."}' >/dev/null
json -X POST "$API/api/contracts/$C/draft-export" | jq -c '{draftExport: .fileName}'   # rendered and kept as an attachment
for phase in DangDamPhan DangGopY DangInKy DangKiemTraCCM DangTrinhKy DangDongDau; do
  move "{\"toPhase\":\"$phase\"}"
done

step "Attach the signed copy, and download it again"
printf '%%PDF-1.4\n%% signed copy of the tour\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%%%EOF\n' >"$DIR/signed.pdf"
ATT=$(curl -fsS -X POST "$API/api/contracts/$C/attachments" -H "$H" -F purpose=ScannedSigned -F "file=@$DIR/signed.pdf;type=application/pdf" | jq -r .id)
curl -fsS "$API/api/contracts/$C/attachments/$ATT" -H "$H" -o "$DIR/signed-downloaded.pdf"
cmp "$DIR/signed.pdf" "$DIR/signed-downloaded.pdf"
echo "attachment $ATT uploaded and downloaded byte for byte"

move '{"toPhase":"DaPhatHanh"}'
curl -fsS "$API/api/contracts/$C" -H "$H" | jq -c '{maHopDong, phase, approvals: (.approvals | length), attachments: [.attachments[].purpose]}'
# Reserved on entering DangTrinhKy (409 budget_exceeded if short under Block), committed at DaPhatHanh.
curl -fsS "$API/api/budgets/$BUD" -H "$H" | jq -c '{remaining, lines: [.lines[] | {code, committedAmount, heldBy: [.commitments[].contractId]}]}'
curl -fsS "$API/api/contracts?search=coc+khoan&sort=-createdAt" -H "$H" | jq -c '{total: .totalCount}'
curl -fsS "$API/api/contracts/inbox" -H "$H" >/dev/null   # most urgent first, with overdue and hoursRemaining

step "A purchase evaluation (policy A under 500 million VND): a quotation, the winner, submitted, approved"
PE=$(json -X POST "$API/api/purchase-evaluations" \
  -d "{\"title\":\"Chọn nhà cung cấp thép\",\"projectId\":\"$PRJ\",\"estimatedValue\":300000000}" | jq -r .id)
Q=$(json -X POST "$API/api/purchase-evaluations/$PE/quotations" -d "{\"supplierId\":\"$SUP\",\"amount\":290000000,\"deliveryDays\":30}" \
  | jq -r '.quotations[0].id')
json -X POST "$API/api/purchase-evaluations/$PE/select-winner" -d "{\"quotationId\":\"$Q\"}" >/dev/null
for phase in ChoDuAn ChoCEODuyetNCC DaDuyet; do
  json -X POST "$API/api/purchase-evaluations/$PE/transitions" -d "{\"toPhase\":\"$phase\"}" | jq -r '"evaluation " + .maPhieu + " moved to " + .phase'
done
curl -fsS "$API/api/suppliers/$SUP" -H "$H" | jq -c '{code, approvedEvaluations}'   # the supplier's standing

step "Workflows: a new draft version of the contract workflow, validated and published (new contracts pin it once assigned)"
V1=$(curl -fsS "$API/api/workflows?documentKind=contract" -H "$H" | jq -r '[.[] | select(.key == "contract-default")][0].id')
V2=$(json -X POST "$API/api/workflows" -d "{\"documentKind\":\"contract\",\"key\":\"contract-tour-$RUN\",\"name\":\"Tour copy\",\"fromId\":\"$V1\"}" | jq -r .id)
json -X POST "$API/api/workflows/$V2/validate" | jq -c '{valid}'
json -X POST "$API/api/workflows/$V2/publish" | jq -c '{key, version, status}'
curl -fsS "$API/api/workflows/$V1/in-flight" -H "$H" | jq -c '{inFlight: .total}'
json -X POST "$API/api/workflows/$V1/migrate" -d "{\"toDefinitionId\":\"$V2\",\"dryRun\":true}" | jq -c '{plan: [.byPhase[] | {phase, mapped}]}'

step "Reports: the Excel export and the dashboard"
curl -fsS "$API/api/reports/contracts/export" -H "$H" -o "$DIR/contracts.xlsx"
echo "export written to $DIR/contracts.xlsx"
curl -fsS "$API/api/reports/dashboard" -H "$H" | jq -c '{totalContracts, publishedThisMonth, byPhase: [.byPhase[] | select(.count > 0)]}'

step "Notifications: the unread count, and a one-time ticket for the WebSocket (ws://…/api/notifications/ws?ticket=…)"
curl -fsS "$API/api/notifications/unread-count" -H "$H" | jq -c .
curl -fsS -X POST "$API/api/notifications/ws-ticket" -H "$H" | jq -c '{expiresAt}'
echo
echo "tour finished: contract $C published"
