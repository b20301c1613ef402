package web

import (
	"fmt"
	"strings"
)

// Languages the pages speak; the first is the default unless
// business.language says otherwise.
var Languages = []string{"vi", "en"}

// catalog holds every module's messages: lang → key → text.
type catalog map[string]map[string]string

// add merges m into lang. Keys are shared by every module, so a key that
// already holds another text is refused: the module registered last would
// otherwise silently reword the pages of the others.
func (c catalog) add(lang string, m map[string]string) error {
	if c[lang] == nil {
		c[lang] = map[string]string{}
	}
	for k, v := range m {
		if old, ok := c[lang][k]; ok && old != v {
			return fmt.Errorf("message %q (%s) is already %q, not %q", k, lang, old, v)
		}
		c[lang][k] = v
	}
	return nil
}

// text looks key up in lang, then in English, then gives the key itself so
// a missing message is visible rather than blank. Arguments fill %s/%d verbs.
func (c catalog) text(lang, key string, args ...any) string {
	msg, ok := c[lang][key]
	if !ok {
		msg, ok = c["en"][key]
	}
	if !ok {
		msg = key
	}
	if len(args) > 0 {
		return fmt.Sprintf(msg, args...)
	}
	return msg
}

// has reports whether key exists in lang or English.
func (c catalog) has(lang, key string) bool {
	_, ok := c[lang][key]
	if !ok {
		_, ok = c["en"][key]
	}
	return ok
}

// fieldMessage translates one of the validator's English field messages
// (httpx.Validate) by its fixed beginning; a message it does not know is
// shown as the service wrote it.
func (c catalog) fieldMessage(lang, msg string) string {
	if lang == "en" {
		return msg
	}
	for _, p := range fieldPatterns {
		if rest, ok := strings.CutPrefix(msg, p.prefix); ok {
			return c.text(lang, p.key) + strings.TrimSuffix(rest, ".")
		}
	}
	if c.has(lang, "field."+msg) {
		return c.text(lang, "field."+msg)
	}
	return msg
}

var fieldPatterns = []struct{ prefix, key string }{
	{"Must be at least ", "field.min"},
	{"Must be at most ", "field.max"},
	{"Must be greater than ", "field.gt"},
	{"Must be one of: ", "field.oneof"},
}

// platformMessages are the layout's, the sign-in page's and the problems'
// texts.
var platformMessages = map[string]map[string]string{
	"vi": {
		"app.name":                             "ContractFlow",
		"nav.home":                             "Trang chủ",
		"nav.menu":                             "Menu chính",
		"nav.skip":                             "Bỏ qua đến nội dung",
		"nav.notifications":                    "Thông báo",
		"nav.unread":                           "%d thông báo chưa đọc",
		"nav.language":                         "Ngôn ngữ",
		"nav.signout":                          "Đăng xuất",
		"nav.signedin":                         "Đang đăng nhập: %s",
		"lang.vi":                              "Tiếng Việt",
		"lang.en":                              "English",
		"lang.save":                            "Đổi",
		"login.title":                          "Đăng nhập",
		"login.email":                          "Email",
		"login.password":                       "Mật khẩu",
		"login.submit":                         "Đăng nhập",
		"login.intro":                          "Đăng nhập để làm việc với hợp đồng và hồ sơ trình duyệt.",
		"home.title":                           "Trang chủ",
		"home.welcome":                         "Xin chào, %s.",
		"error.title":                          "Có lỗi",
		"error.404":                            "Không tìm thấy trang",
		"error.404.detail":                     "Địa chỉ này không tồn tại hoặc đã bị xoá.",
		"error.403":                            "Không được phép",
		"error.500":                            "Lỗi hệ thống",
		"error.back":                           "Về trang chủ",
		"error.trace":                          "Mã tra cứu: %s",
		"form.save":                            "Lưu",
		"form.cancel":                          "Huỷ",
		"form.required":                        "bắt buộc",
		"form.search":                          "Tìm kiếm",
		"form.filter":                          "Lọc",
		"form.all":                             "Tất cả",
		"form.working":                         "Đang xử lý…",
		"pager.label":                          "Phân trang",
		"pager.prev":                           "Trang trước",
		"pager.next":                           "Trang sau",
		"pager.status":                         "Trang %d / %d — %d mục",
		"list.empty":                           "Không có mục nào.",
		"flash.saved":                          "Đã lưu.",
		"problem.stale":                        "Có người khác vừa thay đổi hồ sơ này. Trang đang hiển thị trạng thái hiện tại; hãy xem lại rồi thử lại.",
		"problem.validation_failed":            "Vui lòng sửa các trường bị đánh dấu.",
		"problem.invalid_credentials":          "Email hoặc mật khẩu không đúng.",
		"problem.account_locked":               "Tài khoản bị khoá tạm thời do đăng nhập sai nhiều lần. Thử lại sau %s.",
		"problem.account_disabled":             "Tài khoản đã bị vô hiệu hoá; hãy liên hệ quản trị viên.",
		"problem.forbidden":                    "Bạn không có quyền thực hiện thao tác này.",
		"problem.transition_forbidden":         "Vai trò của bạn không được thực hiện bước chuyển này.",
		"problem.invalid_transition":           "Bước chuyển này không còn hợp lệ ở trạng thái hiện tại.",
		"problem.not_found":                    "Không tìm thấy.",
		"problem.not_editable":                 "Hồ sơ không còn sửa được ở trạng thái hiện tại.",
		"problem.not_deletable":                "Hồ sơ không xoá được ở trạng thái hiện tại.",
		"problem.stale_version":                "Có người khác vừa thay đổi hồ sơ này.",
		"problem.duplicate_code":               "Mã này đã tồn tại.",
		"problem.in_use":                       "Đang được sử dụng, không xoá được.",
		"problem.budget_exceeded":              "Vượt ngân sách còn lại.",
		"problem.opinions_missing":             "Còn thiếu ý kiến của các bộ phận.",
		"problem.cannot_disable_self":          "Bạn không thể tự vô hiệu hoá tài khoản của mình.",
		"problem.cannot_remove_own_admin":      "Bạn không thể tự bỏ vai trò Admin của mình.",
		"problem.cannot_lower_admin":           "Vai trò Admin luôn giữ mọi quyền.",
		"problem.rate_limited":                 "Quá nhiều yêu cầu; vui lòng thử lại sau ít phút.",
		"problem.payload_too_large":            "Tệp quá lớn.",
		"problem.unsupported_media_type":       "Loại tệp không được chấp nhận.",
		"problem.request_timeout":              "Yêu cầu không đến kịp; hãy thử lại.",
		"problem.csrf_token":                   "Biểu mẫu đã hết hạn hoặc không được gửi từ trang này; hãy tải lại trang và thử lại.",
		"problem.csrf_origin":                  "Biểu mẫu được gửi từ một trang khác.",
		"problem.internal":                     "Đã xảy ra lỗi không mong muốn.",
		"field.Is required.":                   "Bắt buộc nhập.",
		"field.Must be a valid email address.": "Email không hợp lệ.",
		"field.Must be a UUID.":                "Giá trị không hợp lệ.",
		"field.min":                            "Tối thiểu ",
		"field.max":                            "Tối đa ",
		"field.gt":                             "Phải lớn hơn ",
		"field.oneof":                          "Phải là một trong: ",
	},
	"en": {
		"app.name":                        "ContractFlow",
		"nav.home":                        "Home",
		"nav.menu":                        "Main menu",
		"nav.skip":                        "Skip to content",
		"nav.notifications":               "Notifications",
		"nav.unread":                      "%d unread notifications",
		"nav.language":                    "Language",
		"nav.signout":                     "Sign out",
		"nav.signedin":                    "Signed in as %s",
		"lang.vi":                         "Tiếng Việt",
		"lang.en":                         "English",
		"lang.save":                       "Change",
		"login.title":                     "Sign in",
		"login.email":                     "Email",
		"login.password":                  "Password",
		"login.submit":                    "Sign in",
		"login.intro":                     "Sign in to work on contracts and approvals.",
		"home.title":                      "Home",
		"home.welcome":                    "Hello, %s.",
		"error.title":                     "Something went wrong",
		"error.404":                       "Page not found",
		"error.404.detail":                "This address does not exist or was deleted.",
		"error.403":                       "Not allowed",
		"error.500":                       "System error",
		"error.back":                      "Back to the home page",
		"error.trace":                     "Reference: %s",
		"form.save":                       "Save",
		"form.cancel":                     "Cancel",
		"form.required":                   "required",
		"form.search":                     "Search",
		"form.filter":                     "Filter",
		"form.all":                        "All",
		"form.working":                    "Working…",
		"pager.label":                     "Pages",
		"pager.prev":                      "Previous page",
		"pager.next":                      "Next page",
		"pager.status":                    "Page %d of %d — %d items",
		"list.empty":                      "Nothing here.",
		"flash.saved":                     "Saved.",
		"problem.stale":                   "Someone else changed this record meanwhile. The page now shows its current state; check it and try again.",
		"problem.validation_failed":       "Please correct the marked fields.",
		"problem.invalid_credentials":     "The email or password is incorrect.",
		"problem.account_locked":          "The account is locked after too many failed sign-ins. Try again after %s.",
		"problem.account_disabled":        "The account is disabled; ask an administrator.",
		"problem.forbidden":               "You are not allowed to do this.",
		"problem.transition_forbidden":    "Your role may not take this move.",
		"problem.invalid_transition":      "This move is no longer possible from the current state.",
		"problem.not_found":               "Not found.",
		"problem.not_editable":            "The record can no longer be edited in its current state.",
		"problem.not_deletable":           "The record cannot be deleted in its current state.",
		"problem.stale_version":           "Someone else changed this record meanwhile.",
		"problem.duplicate_code":          "This code already exists.",
		"problem.in_use":                  "It is in use and cannot be deleted.",
		"problem.budget_exceeded":         "This exceeds the remaining budget.",
		"problem.opinions_missing":        "Some departments' opinions are missing.",
		"problem.cannot_disable_self":     "You cannot disable your own account.",
		"problem.cannot_remove_own_admin": "You cannot remove your own Admin role.",
		"problem.cannot_lower_admin":      "The Admin role keeps every permission.",
		"problem.rate_limited":            "Too many requests; try again in a minute.",
		"problem.payload_too_large":       "The file is too large.",
		"problem.unsupported_media_type":  "This type of file is not accepted.",
		"problem.request_timeout":         "The request did not arrive in time; try again.",
		"problem.csrf_token":              "The form has expired or did not come from this site; reload the page and try again.",
		"problem.csrf_origin":             "The form was sent from another site.",
		"problem.internal":                "An unexpected error occurred.",
		"field.min":                       "At least ",
		"field.max":                       "At most ",
		"field.gt":                        "Must be greater than ",
		"field.oneof":                     "Must be one of: ",
	},
}
