// ContractFlow pages: a little progressive enhancement; every page also
// works without it.
(function () {
  "use strict";
  var csrf = (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  // A select marked data-autosubmit sends its form when changed.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (sel) {
    sel.addEventListener("change", function () { sel.form.submit(); });
    var btn = sel.form.querySelector("button"); if (btn) btn.hidden = true;
  });

  // A form marked data-confirm asks first; one marked data-working shows
  // that it is working (long exports) and is not sent twice.
  document.querySelectorAll("form").forEach(function (f) {
    f.addEventListener("submit", function (ev) {
      var msg = f.getAttribute("data-confirm");
      if (msg && !window.confirm(msg)) { ev.preventDefault(); return; }
      if (f.hasAttribute("data-working")) {
        var b = ev.submitter || f.querySelector("button[type=submit]");
        if (b) { b.disabled = true; b.classList.add("working"); b.textContent = f.getAttribute("data-working"); }
      }
    });
  });

  // The bell: the unread count rises live over the notification WebSocket
  // (DESIGN §10). A ticket comes from the page session; a dropped socket is
  // reopened with a new ticket after a pause.
  var bell = document.getElementById("bell");
  var countEl = document.getElementById("bell-count");
  if (!bell || !countEl || !window.WebSocket || !window.fetch) return;
  var delay = 1000;
  function setCount(n) {
    countEl.textContent = String(n);
    countEl.setAttribute("data-count", String(n));
  }
  function connect() {
    fetch(bell.getAttribute("data-ticket-url"), {
      method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf }
    }).then(function (r) {
      if (!r.ok) throw new Error("ticket " + r.status);
      return r.json();
    }).then(function (body) {
      var proto = location.protocol === "https:" ? "wss:" : "ws:";
      var ws = new WebSocket(proto + "//" + location.host + "/api/notifications/ws?ticket=" + encodeURIComponent(body.ticket));
      ws.onopen = function () { delay = 1000; bell.setAttribute("data-live", "1"); };
      ws.onmessage = function (ev) {
        try {
          var msg = JSON.parse(ev.data);
          if (msg.type === "notification" && msg.data && !msg.data.readAt) {
            setCount(parseInt(countEl.textContent, 10) + 1);
          }
        } catch (e) { /* not ours */ }
      };
      ws.onclose = function () { bell.removeAttribute("data-live"); retry(); };
    }).catch(retry);
  }
  function retry() { setTimeout(connect, delay); delay = Math.min(delay * 2, 60000); }
  connect();
})();
