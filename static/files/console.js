// settle console enhancements. The pages work without this file: it
// reveals copy buttons, keeps relative times ("3 min ago") fresh, and
// keeps the live pages (lists, an operation's story) up to date.
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
  function enhance(root) {
    root.querySelectorAll("button[data-copy]").forEach(function (b) {
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
  }

  // Live pages. Every few seconds (jittered) the page asks its own URL
  // for its live parts (header X-Settle-Live: 1) and puts each part that
  // changed in place of its namesake, unless the person is inside it
  // (focus, or a field changed from what the server sent): nothing is
  // ever replaced under their hands. Polling stops while the tab is
  // hidden and while paused (kept for the tab's session).
  var region = document.querySelector('[data-live-part="region"]');
  var last = {};
  // Relative times change by themselves; only what the server says
  // counts as a change.
  function norm(html) { return html.replace(/(<time\b[^>]*>)[^<]*(<\/time>)/g, "$1$2"); }
  document.querySelectorAll("[data-live-part]").forEach(function (el) {
    last[el.getAttribute("data-live-part")] = norm(el.innerHTML);
  });
  enhance(document);
  setInterval(refresh, 30000);
  if (!region) { return; }

  var every = parseInt(region.getAttribute("data-live-every"), 10) || 15000;
  var toggle = document.querySelector("[data-live-toggle]");
  var status = document.querySelector("[data-live-status]");
  var pausedKey = "settle.live.paused";
  var timer = null, inflight = false, stopped = false, waiting = false;

  function paused() {
    try { return sessionStorage.getItem(pausedKey) === "1"; } catch (e) { return false; }
  }
  function setPaused(on) {
    try {
      if (on) { sessionStorage.setItem(pausedKey, "1"); } else { sessionStorage.removeItem(pausedKey); }
    } catch (e) { /* storage refused: the page still pauses until it is left */ }
  }
  function say(text) { if (status && status.textContent !== text) { status.textContent = text; } }
  function label() { toggle.textContent = paused() ? "Resume live updates" : "Pause live updates"; }

  // busy reports whether the person is inside el: focus in it, or a field
  // whose value is not the one the server sent.
  function busy(el) {
    var a = document.activeElement;
    if (a && a !== document.body && el.contains(a)) { return true; }
    var fields = el.querySelectorAll("input, select, textarea");
    for (var i = 0; i < fields.length; i++) {
      var f = fields[i];
      if (f.type === "checkbox" || f.type === "radio") {
        if (f.checked !== f.defaultChecked) { return true; }
      } else if (f.tagName === "SELECT") {
        for (var j = 0; j < f.options.length; j++) {
          var o = f.options[j], first = j === 0 && !Array.prototype.some.call(f.options, function (x) { return x.defaultSelected; });
          if (o.selected !== (o.defaultSelected || first)) { return true; }
        }
      } else if (f.type !== "hidden" && f.value !== f.defaultValue) {
        return true;
      }
    }
    return false;
  }

  // items are the region's rows or entries, by a key that survives a
  // re-render: the operation's id, the row's first link, or its content.
  function items(root) {
    var keys = {};
    root.querySelectorAll("tbody > tr, ol.timeline > li, ul.proposals > li").forEach(function (el) {
      var link = el.querySelector("a[href]");
      keys[el.getAttribute("data-operation-id") || (link && link.getAttribute("href")) || norm(el.innerHTML)] = true;
    });
    return keys;
  }
  function news(before, after) {
    var added = 0, gone = 0, k;
    for (k in after) { if (!before[k]) { added++; } }
    for (k in before) { if (!after[k]) { gone++; } }
    var parts = [];
    if (added) { parts.push(added + (added === 1 ? " new item" : " new items")); }
    if (gone) { parts.push(gone + (gone === 1 ? " item gone" : " items gone")); }
    return parts.join(", ");
  }

  function schedule() {
    clearTimeout(timer);
    timer = null;
    if (stopped || paused() || document.hidden) { return; }
    timer = setTimeout(poll, every * (0.8 + Math.random() * 0.4));
  }
  function stop(why) {
    stopped = true;
    clearTimeout(timer);
    toggle.hidden = true;
    say(why);
  }
  function apply(text) {
    var doc = new DOMParser().parseFromString(text, "text/html");
    var before = items(region), navChanged = false, held = false, updated = null;
    doc.querySelectorAll("[data-live-part]").forEach(function (src) {
      var name = src.getAttribute("data-live-part");
      var dst = document.querySelector('[data-live-part="' + name + '"]');
      if (!dst) { return; }
      if (name === "updated") { updated = src; return; }
      var n = norm(src.innerHTML);
      if (n === last[name]) { return; }
      if (busy(dst)) { held = true; return; }
      dst.innerHTML = src.innerHTML;
      last[name] = n;
      enhance(dst);
      navChanged = navChanged || name === "nav";
    });
    if (held) {
      if (!waiting) { say("New changes are waiting: they appear when you leave the form or the list."); }
      waiting = true;
      return;
    }
    waiting = false;
    var dst = document.querySelector('[data-live-part="updated"]');
    if (updated && dst) { dst.innerHTML = updated.innerHTML; }
    // Only rows that came or went, and the nav's counts, are announced:
    // a row that changed in place (an age, a status) shows without words,
    // so that a screen reader is not told "updated" every minute.
    var what = news(before, items(region));
    if (navChanged) { what = what ? what + "; new counts in the navigation" : "new counts in the navigation"; }
    if (what) {
      say("Updated " + (updated ? updated.textContent.replace(/^\s*Updated at\s*/, "").trim() : "") + ": " + what);
    }
  }
  function poll() {
    timer = null;
    if (stopped || inflight || paused() || document.hidden) { return; }
    inflight = true;
    fetch(location.pathname + location.search, {headers: {"X-Settle-Live": "1"}, credentials: "same-origin", cache: "no-store"})
      .then(function (res) {
        if (!res.ok || res.headers.get("X-Settle-Live") !== "fragment") {
          throw new Error("stop");
        }
        return res.text();
      })
      .then(function (text) { inflight = false; apply(text); schedule(); }, function (err) {
        inflight = false;
        if (err && err.message === "stop") {
          stop("Live updates stopped: reload the page.");
        } else {
          schedule(); // the network failed: try again later
        }
      });
  }

  toggle.hidden = false;
  label();
  toggle.addEventListener("click", function () {
    setPaused(!paused());
    label();
    say(paused() ? "Live updates paused." : "Live updates resumed.");
    if (paused()) { schedule(); } else { poll(); }
  });
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) { schedule(); } else { poll(); }
  });
  schedule();
})();
