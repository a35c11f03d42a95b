// acomm web: live updates without a reload, no library. The server says `change` on
// /events when another process commits; the page fetches its own fragment again (the
// X-Fragment header) and puts it in #live. On the feed, scrolled away from the top, it
// leaves the rows in place and shows "N new" instead; a click brings them in.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live || !window.EventSource || !window.fetch) return;
  var status = document.getElementById("status");
  var badge = document.getElementById("new-messages");
  var isFeed = live.getAttribute("data-feed") === "1";
  var busy = false, again = false, held = null;

  function topId(root) {
    var row = root.querySelector("tr[data-id]");
    return row ? Number(row.getAttribute("data-id")) : 0;
  }

  function put(fragment) {
    live.replaceChildren.apply(live, Array.prototype.slice.call(fragment.childNodes));
    held = null;
    if (badge) badge.hidden = true;
  }

  function apply(html) {
    var tpl = document.createElement("template");
    tpl.innerHTML = html; // a template's scripts never run, and the CSP allows none inline
    if (isFeed && badge && window.scrollY > 40) {
      var shown = topId(live);
      var fresh = Array.prototype.filter.call(tpl.content.querySelectorAll("tr[data-id]"),
        function (r) { return Number(r.getAttribute("data-id")) > shown; }).length;
      if (fresh > 0) {
        held = tpl.content;
        badge.textContent = fresh + " new";
        badge.hidden = false;
        return;
      }
    }
    put(tpl.content);
  }

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(location.pathname + location.search, {
      headers: { "X-Fragment": "1" }, credentials: "same-origin", cache: "no-store"
    }).then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) { if (html !== null) apply(html); })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  if (badge) {
    badge.addEventListener("click", function () {
      if (held) put(held);
      window.scrollTo(0, 0);
    });
  }
  window.addEventListener("scroll", function () {
    if (held && window.scrollY <= 40) put(held);
  });

  var source = new EventSource("/events");
  source.addEventListener("open", function () { if (status) status.hidden = false; });
  source.addEventListener("error", function () { if (status) status.hidden = true; });
  source.addEventListener("change", refresh);
})();
