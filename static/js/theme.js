// The owner's colour scheme, applied before the page is drawn (loaded in <head>, not deferred: no flash of the
// other scheme). "auto" (nothing stored) follows the system (prefers-color-scheme); "light" and "dark" are kept
// in this browser (localStorage). The header's button cycles through the three.
(function () {
  var KEY = "a2aconsole-theme";
  var root = document.documentElement;
  function stored() {
    try { return localStorage.getItem(KEY) || "auto"; } catch (e) { return "auto"; }
  }
  function apply(choice) {
    if (choice === "light" || choice === "dark") root.setAttribute("data-theme", choice);
    else root.removeAttribute("data-theme");
    var button = document.querySelector(".theme-toggle");
    if (button) {
      var label = { auto: "Theme: auto", light: "Theme: light", dark: "Theme: dark" }[choice];
      button.textContent = label;
      button.setAttribute("aria-label", label + " (change)");
    }
  }
  apply(stored());
  document.addEventListener("DOMContentLoaded", function () {
    apply(stored());
    var button = document.querySelector(".theme-toggle");
    if (!button) return;
    button.hidden = false;
    button.addEventListener("click", function () {
      var next = { auto: "light", light: "dark", dark: "auto" }[stored()] || "auto";
      try { if (next === "auto") localStorage.removeItem(KEY); else localStorage.setItem(KEY, next); } catch (e) { /* private mode */ }
      apply(next);
    });
  });
})();
