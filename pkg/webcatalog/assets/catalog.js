// skilldrop web catalog: copy buttons. The page works without this file:
// every command is plain, selectable text, and the buttons stay hidden.
"use strict";
(function () {
  var status = document.getElementById("copy-status");
  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }
  function fallback(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    try {
      return document.execCommand("copy");
    } catch (e) {
      return false;
    }
  }
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = target.textContent;
      var label = button.getAttribute("data-label") || "command";
      var done = function () {
        button.textContent = "Copied";
        say("Copied the " + label + " to the clipboard.");
        window.setTimeout(function () { button.textContent = "Copy"; }, 2000);
      };
      var failed = function () {
        say(fallback(target) ? "Copied the " + label + " to the clipboard." : "Select the text and copy it.");
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, failed);
      } else {
        failed();
      }
    });
  });
})();
