// settle console enhancements. The pages work without this file: it only
// reveals copy buttons and keeps relative times ("3 min ago") fresh.
(function () {
  "use strict";
  function relative(then, now) {
    var s = Math.round((now - then) / 1000);
    var future = s < 0;
    s = Math.abs(s);
    var text;
    if (s < 45) { text = "just now"; return text; }
    else if (s < 3600) { text = Math.round(s / 60) + " min"; }
    else if (s < 86400) { text = Math.round(s / 3600) + " h"; }
    else { text = Math.round(s / 86400) + " days"; }
    return future ? "in " + text : text + " ago";
  }
  function refresh() {
    var now = Date.now();
    document.querySelectorAll("time[data-relative]").forEach(function (el) {
      var t = Date.parse(el.getAttribute("datetime"));
      if (!isNaN(t)) { el.textContent = relative(t, now); }
    });
  }
  document.querySelectorAll("button[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var text = b.getAttribute("data-copy");
      if (!navigator.clipboard) { return; }
      navigator.clipboard.writeText(text).then(function () {
        var label = b.textContent;
        b.textContent = "Copied";
        setTimeout(function () { b.textContent = label; }, 1500);
      });
    });
  });
  setInterval(refresh, 30000);
})();
