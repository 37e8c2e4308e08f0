// The console's only script besides htmx (the Content-Security-Policy allows no inline script or hx-on).

// Marks the page live while its WebSocket is open and has sent the current state (for the "live" dot).
document.addEventListener("htmx:wsAfterMessage", function () { document.body.dataset.wsOpen = "1"; });
document.addEventListener("htmx:wsClose", function () { document.body.dataset.wsOpen = "0"; });

// A form marked data-clear-after-send empties its message box once its own htmx request succeeded, unless the
// owner typed something else meanwhile (a follow-up written while the answer was on its way stays).
var sentText = new WeakMap(); // form -> the message its request in flight carries
document.addEventListener("htmx:beforeRequest", function (event) {
  var form = event.detail.elt;
  if (!form.matches || !form.matches("form[data-clear-after-send]")) return;
  var box = form.querySelector("textarea");
  if (box) sentText.set(form, box.value);
});
document.addEventListener("htmx:afterRequest", function (event) {
  var form = event.detail.elt;
  if (!form.matches || !form.matches("form[data-clear-after-send]")) return;
  var sent = sentText.get(form);
  sentText.delete(form);
  var box = form.querySelector("textarea");
  if (!event.detail.successful) return;
  if (box && box.value === sent) box.value = "";
  // the message went out with its files: the next one starts without them (and is no longer an edit)
  form.querySelectorAll("input[type=file]").forEach(function (f) { f.value = ""; });
  form.querySelectorAll("input[name=edit], .kept-files").forEach(function (el) { el.remove(); });
});

// An ordinary htmx reply that is one element with an id (the chat's `#reply` answer panel) takes the place of
// the element with that id around its target, never a place inside it: a form in the panel targeting itself
// would otherwise nest a second `#reply` in the first (two answer panels, two elements with one id).
document.addEventListener("htmx:beforeSwap", function (event) {
  var d = event.detail;
  if (!d.xhr || !d.shouldSwap || !d.target || typeof d.serverResponse !== "string") return;
  var holder = document.createElement("template");
  holder.innerHTML = d.serverResponse;
  var top = holder.content.firstElementChild;
  if (!top || !top.id || holder.content.children.length !== 1) return;
  var around = d.target.closest("#" + CSS.escape(top.id));
  if (around && around !== d.target) {
    d.target = around;
    d.swapOverride = "outerHTML";
  }
});

// What the owner typed into a box a live update replaces (an answer in the chat log or the answer panel) goes
// into the new box of the same id, now or when it comes back (a panel may show "Working on it" in between), and
// the box keeps the focus and the caret. A question the owner opened (Cancel's "Ask the agent to stop it?")
// stays open in the new markup.
var typed = {}; // box id -> what was typed, until a box of that id is back
var refocus = null; // the focused box a live update replaced: {id, start, end}

function keepTyped(old, fresh) {
  old.querySelectorAll("details[id][open]").forEach(function (opened) {
    var again = fresh.querySelector("#" + CSS.escape(opened.id));
    if (again) again.setAttribute("open", "");
  });
  old.querySelectorAll("input[id], textarea[id]").forEach(function (box) {
    var sent = box.form && box.form.classList.contains("htmx-request"); // its answer is on its way: not kept
    var own = box.value !== box.defaultValue || box.hasAttribute("data-typed"); // not what the server wrote
    if (box.value && own && !sent) typed[box.id] = box.value;
    if (box === document.activeElement) {
      refocus = { id: box.id, start: box.selectionStart, end: box.selectionEnd };
    }
  });
  fresh.querySelectorAll("input[id], textarea[id]").forEach(function (box) {
    if (!(box.id in typed) || box.type === "hidden" || box.type === "file") return;
    if (box.tagName === "TEXTAREA") box.textContent = typed[box.id]; else box.setAttribute("value", typed[box.id]);
    box.setAttribute("data-typed", ""); // the next live update keeps it too
    delete typed[box.id];
  });
}

document.addEventListener("htmx:wsAfterMessage", function () {
  var box = refocus && document.getElementById(refocus.id);
  if (box && document.activeElement !== box && (!document.activeElement || document.activeElement === document.body)) {
    box.focus();
    try { box.setSelectionRange(refocus.start, refocus.end); } catch (e) { /* a box without a caret */ }
  }
  refocus = null;
});

// Live fragments (`hx-ext="ws,live"`): a tab hears about more tasks than it shows (the answer panel of one
// task, the rows its search matches). Before htmx swaps a WebSocket message, the fragments whose target is
// not on this page are dropped, so htmx has nothing to complain about (htmx:oobErrorNoTarget), and so is a
// fragment whose `data-live-key` equals that of the element it would replace (nothing new to show).
htmx.defineExtension("live", {
  transformResponse: function (text, xhr) {
    if (xhr) return text; // an ordinary htmx request: its response is swapped as it is
    var holder = document.createElement("template");
    holder.innerHTML = text;
    var kept = []; // an earlier fragment of this message may bring the target (a table, then its rows)
    Array.prototype.slice.call(holder.content.children).forEach(function (el) {
      var oob = el.getAttribute("hx-swap-oob") || "true";
      var colon = oob.indexOf(":");
      var selector = colon > 0 ? oob.slice(colon + 1) : el.id ? "#" + CSS.escape(el.id) : "";
      var here = selector && document.querySelector(selector);
      var found = here || (selector && kept.some(function (k) {
        return k.matches(selector) || k.querySelector(selector);
      }));
      // the same content again (`data-live-key`): left alone, so a form in it keeps what is typed and its request
      var same = here && el.dataset.liveKey !== undefined && here.dataset.liveKey === el.dataset.liveKey;
      if (!found || same) return el.remove();
      if (here && colon < 0) keepTyped(here, el); // a swap that replaces what is here
      kept.push(el);
    });
    return holder.innerHTML;
  },
});

// Ages and times tick in the browser, without asking the server: `<time data-age datetime=…>` shows how long
// since (45s, 12m, 3h 5m), `<span data-ago=…>` a relative age beside a time ("3 min ago"), and a
// `<time data-local=time|datetime>` is shown in this browser's time zone (the owner's).
function since(iso, now) {
  var at = Date.parse(iso);
  return isNaN(at) ? null : Math.max(0, Math.floor((now - at) / 1000));
}

function ageText(s) {
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m";
  if (s < 86400) return Math.floor(s / 3600) + "h " + Math.floor((s % 3600) / 60) + "m";
  return Math.floor(s / 86400) + "d " + Math.floor((s % 86400) / 3600) + "h";
}

function agoText(s) {
  if (s < 10) return "just now";
  if (s < 60) return s + " s ago";
  if (s < 3600) return Math.floor(s / 60) + " min ago";
  if (s < 86400) return Math.floor(s / 3600) + " h ago";
  var days = Math.floor(s / 86400);
  return days + (days === 1 ? " day ago" : " days ago");
}

function two(n) { return (n < 10 ? "0" : "") + n; }

function localTime(el) {
  var at = new Date(el.getAttribute("datetime"));
  if (isNaN(at.getTime())) return;
  var time = two(at.getHours()) + ":" + two(at.getMinutes()) + ":" + two(at.getSeconds());
  var date = at.getFullYear() + "-" + two(at.getMonth() + 1) + "-" + two(at.getDate());
  var today = new Date();
  var sameDay = at.toDateString() === today.toDateString();
  el.textContent = el.dataset.local === "datetime" || !sameDay ? date + " " + time : time;
  el.title = date + " " + time + " (" + Intl.DateTimeFormat().resolvedOptions().timeZone + ")";
  el.dataset.localized = "1";
}

function tick() {
  var now = Date.now();
  document.querySelectorAll("[data-age]").forEach(function (el) {
    var s = since(el.getAttribute("datetime"), now);
    if (s !== null) el.textContent = ageText(s);
  });
  document.querySelectorAll("[data-ago]").forEach(function (el) {
    var s = since(el.dataset.ago, now);
    if (s !== null) el.textContent = agoText(s);
  });
  document.querySelectorAll("time[data-local]:not([data-localized])").forEach(localTime);
}

document.addEventListener("DOMContentLoaded", tick);
document.addEventListener("htmx:afterSettle", tick);
document.addEventListener("htmx:wsAfterMessage", tick);
setInterval(tick, 1000);

// The main menu on a phone: one button opens and closes it (the style sheet folds it only while this runs).
(function () {
  var toggle = document.querySelector("header.top .menu-toggle");
  if (!toggle) return;
  document.body.classList.add("has-menu-toggle");
  toggle.addEventListener("click", function () {
    var open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    toggle.closest("header.top").classList.toggle("menu-open", open);
  });
})();

// The conversation: Ctrl+Enter (Cmd+Enter) in the message box sends; the skip link puts the caret in that box.
document.addEventListener("keydown", function (event) {
  if (event.key !== "Enter" || !(event.ctrlKey || event.metaKey)) return;
  var form = event.target.closest && event.target.closest("form[data-send-shortcut]");
  if (!form || event.target.tagName !== "TEXTAREA") return;
  event.preventDefault();
  if (form.reportValidity()) form.requestSubmit();
});
document.addEventListener("click", function (event) {
  var skip = event.target.closest && event.target.closest("a.skip[data-focus]");
  var box = skip && document.querySelector(skip.dataset.focus);
  if (!box) return;
  event.preventDefault();
  box.focus();
});

// The chat opens at its newest message, just above the composer (which stays in view at the bottom), and
// stays there as messages arrive, unless the owner scrolled up to read; older messages load above.
var chat = {
  end: function () { return document.getElementById("chat-end"); },
  composer: function () { return document.getElementById("composer"); },
  // how far the newest message is below what the owner can see (above the composer), in pixels
  below: function () {
    var end = chat.end();
    if (!end) return null;
    var composer = chat.composer();
    var bottom = window.innerHeight - (composer ? composer.getBoundingClientRect().height : 0);
    return end.getBoundingClientRect().bottom - bottom;
  },
  toNewest: function () {
    var below = chat.below();
    if (below !== null) window.scrollBy(0, below + 8);
  },
  following: true,
};
document.addEventListener("DOMContentLoaded", function () {
  if (chat.end() && !/[?&]before=/.test(location.search) && !location.hash) chat.toNewest();
});
document.addEventListener("htmx:wsBeforeMessage", function () {
  var below = chat.below();
  chat.following = below !== null && below < 80; // the newest message was (about) in view
});
document.addEventListener("htmx:wsAfterMessage", function () {
  if (chat.following) chat.toNewest();
});
document.addEventListener("htmx:afterSwap", function (event) {
  if (event.detail.target && event.detail.target.id === "chat-log") chat.toNewest(); // the owner's own send
});

// A task whose messages straddle two pages has its card on both: the one in the latest messages stays (live
// updates find it by its id), the copy among the earlier messages goes, whichever of the two came last.
function dropOlderTwins() {
  var older = document.getElementById("chat-older");
  var log = document.getElementById("chat-log");
  if (!older || !log) return;
  older.querySelectorAll("[id]").forEach(function (el) {
    if (log.querySelector("#" + CSS.escape(el.id))) el.remove();
  });
}
document.addEventListener("htmx:afterSwap", dropOlderTwins);
document.addEventListener("htmx:oobAfterSwap", dropOlderTwins);
document.addEventListener("htmx:wsAfterMessage", dropOlderTwins);

// Agents' text (web/_text.html): Show all unfolds a long text, Raw shows the text as the agent sent it, Copy
// and Download take that raw text; a `data-copy` button (an id) copies its value. The clipboard API needs a
// secure context: elsewhere (plain http on a LAN address) a selected, hidden box is copied instead.
function copyText(text, button) {
  function done() {
    button.setAttribute("data-copied", "");
    setTimeout(function () { button.removeAttribute("data-copied"); }, 1500);
  }
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text) && done(); });
  } else if (fallbackCopy(text)) {
    done();
  }
}

function fallbackCopy(text) {
  var box = document.createElement("textarea");
  box.value = text;
  box.setAttribute("readonly", "");
  box.className = "sr-only";
  document.body.appendChild(box);
  box.select();
  var ok = false;
  try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
  box.remove();
  return ok;
}

document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest("button");
  if (!button) return;
  if (button.hasAttribute("data-copy") && button.getAttribute("data-copy")) {
    return copyText(button.getAttribute("data-copy"), button);
  }
  var box = button.closest("[data-agent-text]");
  if (!box) return;
  var raw = box.querySelector(".raw");
  if (button.hasAttribute("data-show-all")) {
    var open = box.classList.toggle("expanded");
    button.setAttribute("aria-expanded", open ? "true" : "false");
    button.textContent = open ? "Show less" : "Show all";
  } else if (button.hasAttribute("data-raw")) {
    var showRaw = box.classList.toggle("show-raw");
    raw.hidden = !showRaw;
    button.setAttribute("aria-pressed", showRaw ? "true" : "false");
    button.textContent = showRaw ? "Formatted" : "Raw";
  } else if (button.hasAttribute("data-copy")) {
    copyText(raw.textContent, button);
  } else if (button.hasAttribute("data-download")) {
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([raw.textContent], { type: "text/plain;charset=utf-8" }));
    link.download = "agent-text.txt";
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(function () { URL.revokeObjectURL(link.href); }, 1000);
  }
});

// Knowing when something arrives (#23 item 10). The menu counts unread results and questions waiting; the tab
// title starts with the unread count ("(2) Dashboard · a2aconsole"). An item a visible tab shows
// (`data-unread`, the inbox) is marked read. After a live update the counts are asked again (at most once a
// second). An owner who opted in (Notify me: the browser asks on that click, never on load) gets a browser
// notification when the count grows while the tab is hidden: counts only, never an agent's words.
var counts = { inbox: null, questions: null, timer: null, title: document.title.replace(/^\(\d+\) /, "") };

function showCounts(c) {
  var before = counts.inbox;
  Object.keys(c).forEach(function (name) {
    document.querySelectorAll('[data-count="' + name + '"]').forEach(function (el) {
      el.querySelector(".n").textContent = String(c[name]);
      el.hidden = !c[name];
    });
  });
  counts.inbox = c.inbox;
  counts.questions = c.questions;
  document.title = (c.inbox ? "(" + c.inbox + ") " : "") + counts.title;
  if (before !== null && c.inbox > before) notify(c);
}

function askCounts() {
  var url = document.body.dataset.unreadUrl;
  if (!url || counts.timer) return;
  counts.timer = setTimeout(function () {
    counts.timer = null;
    fetch(url, { credentials: "same-origin" }).then(function (r) { return r.ok ? r.json() : null; })
      .then(function (c) { if (c) showCounts(c); }, function () { /* offline: the next update asks again */ });
  }, 1000);
}

function markSeen() {
  var url = document.body.dataset.seenUrl;
  if (!url || document.visibilityState !== "visible") return;
  var shown = document.querySelectorAll("[data-unread]");
  if (!shown.length) return;
  var ids = Array.prototype.map.call(shown, function (el) {
    var id = el.getAttribute("data-unread");
    el.removeAttribute("data-unread"); // posted once; a live update showing it unread again posts it again
    return id;
  });
  var body = new URLSearchParams({ ids: ids.join(",") });
  var token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  fetch(url, { method: "POST", body: body, credentials: "same-origin", headers: { "X-CSRFToken": token } })
    .then(function (r) { return r.ok ? r.json() : null; })
    .then(function (c) { if (c) showCounts(c); }, function () { /* shown again next time: still unread */ });
}

function notify(c) {
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  if (localStorage.getItem("a2aconsole-notify") !== "on" || document.visibilityState === "visible") return;
  var text = c.inbox + " unread in your inbox" + (c.questions ? ", " + c.questions + " question" + (c.questions > 1 ? "s" : "") + " waiting" : "");
  new Notification("a2aconsole", { body: text, tag: "a2aconsole-unread" });
}

function notifyButton() {
  var button = document.querySelector(".notify-toggle");
  if (!button || !("Notification" in window)) return;
  var on = localStorage.getItem("a2aconsole-notify") === "on" && Notification.permission === "granted";
  button.hidden = Notification.permission === "denied" && !on;
  button.setAttribute("aria-pressed", on ? "true" : "false");
  button.textContent = on ? "Notifications on" : "Notify me";
}

document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest(".notify-toggle");
  if (!button) return;
  if (button.getAttribute("aria-pressed") === "true") {
    localStorage.setItem("a2aconsole-notify", "off");
    return notifyButton();
  }
  Notification.requestPermission().then(function (answer) {
    localStorage.setItem("a2aconsole-notify", answer === "granted" ? "on" : "off");
    notifyButton();
  });
});

document.addEventListener("DOMContentLoaded", function () {
  var first = {};
  document.querySelectorAll("[data-count]").forEach(function (el) {
    first[el.dataset.count] = Number(el.querySelector(".n").textContent) || 0;
  });
  if ("inbox" in first) showCounts(first);
  notifyButton();
  markSeen();
});
document.addEventListener("htmx:wsAfterMessage", function (event) {
  var message = event.detail && event.detail.message;
  // a frame the console ends so (status messages, a watch's news) moves no count: the menu asks nothing
  if (typeof message !== "string" || !message.endsWith("<!-- progress -->")) askCounts();
  markSeen();
});
document.addEventListener("htmx:afterSettle", markSeen);
document.addEventListener("visibilitychange", markSeen);
