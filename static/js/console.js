// The console's only script besides htmx (the Content-Security-Policy allows no inline script or hx-on).

// Marks the page live while its WebSocket is open and has sent the current state (for the "live" dot).
document.addEventListener("htmx:wsAfterMessage", function () { document.body.dataset.wsOpen = "1"; });
document.addEventListener("htmx:wsClose", function () { document.body.dataset.wsOpen = "0"; });

// A form marked data-clear-after-send empties its message box once its own htmx request succeeded.
document.addEventListener("htmx:afterRequest", function (event) {
  var form = event.detail.elt;
  if (!event.detail.successful || !form.matches || !form.matches("form[data-clear-after-send]")) return;
  var box = form.querySelector("textarea");
  if (box) box.value = "";
});
