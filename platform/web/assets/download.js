// Downloads marked data-download (a link, or a GET form) are fetched by
// script so the page can show that a long export is working: the control
// is disabled and says the data-download text until the file arrives. A
// refusal (an HTML page) is opened as a normal navigation, so its problem
// is shown in words. Without JavaScript the link or form downloads as usual.
(function () {
  "use strict";
  if (!window.fetch || !window.URL || !URL.createObjectURL || !window.URLSearchParams) return;

  function fileName(resp) {
    var cd = resp.headers.get("Content-Disposition") || "";
    var m = /filename\*=UTF-8''([^;]+)/i.exec(cd) || /filename="?([^";]+)"?/i.exec(cd);
    return m ? decodeURIComponent(m[1]) : "download";
  }

  function run(url, control, label) {
    if (!control || control.getAttribute("aria-busy") === "true") return;
    var text = control.textContent;
    control.setAttribute("aria-busy", "true");
    control.classList.add("working");
    control.removeAttribute("data-downloaded");
    if (control.tagName === "BUTTON") control.disabled = true;
    control.textContent = label;
    function done() {
      control.removeAttribute("aria-busy");
      control.classList.remove("working");
      if (control.tagName === "BUTTON") control.disabled = false;
      control.textContent = text;
    }
    fetch(url, { credentials: "same-origin" }).then(function (r) {
      var type = r.headers.get("Content-Type") || "";
      if (!r.ok || type.indexOf("text/html") === 0) { window.location.href = url; return; }
      return r.blob().then(function (b) {
        var a = document.createElement("a");
        a.href = URL.createObjectURL(b);
        a.download = fileName(r);
        document.body.appendChild(a);
        a.click();
        a.remove();
        setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
        control.setAttribute("data-downloaded", String(b.size));
      });
    }).catch(function () { window.location.href = url; }).then(done, done);
  }

  document.querySelectorAll("a[data-download]").forEach(function (a) {
    a.addEventListener("click", function (ev) {
      ev.preventDefault();
      run(a.href, a, a.getAttribute("data-download"));
    });
  });
  document.querySelectorAll("form[data-download]").forEach(function (f) {
    f.addEventListener("submit", function (ev) {
      ev.preventDefault();
      var q = new URLSearchParams(new FormData(f)).toString();
      run(f.action + (q ? "?" + q : ""), ev.submitter || f.querySelector("button[type=submit]"), f.getAttribute("data-download"));
    });
  });
})();
