// Marks the page live while its WebSocket is open and has sent the current state (for the "live" dot).
document.addEventListener("htmx:wsAfterMessage", function () { document.body.dataset.wsOpen = "1"; });
document.addEventListener("htmx:wsClose", function () { document.body.dataset.wsOpen = "0"; });
