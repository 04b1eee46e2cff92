// jurist view: the page's only script (served by the app; pages allow no inline script).
// It remembers the labeller's name, saves labels without leaving the page, and submits
// the filter forms marked data-autosubmit when a choice changes.
(function () {
  "use strict";

  var WHO_KEY = "jurist.view.who";

  function storedWho() {
    try {
      return window.localStorage.getItem(WHO_KEY);
    } catch (error) {
      return null;
    }
  }

  function remember(name) {
    try {
      window.localStorage.setItem(WHO_KEY, name);
    } catch (error) {
      // Storage disabled: the name is sent with each label all the same.
    }
  }

  function who() {
    var input = document.getElementById("who");
    var name = input ? input.value.trim() : "";
    return name || (input ? input.getAttribute("data-default") || "" : "");
  }

  function show(status, text, kind) {
    status.textContent = text;
    status.className = kind;
  }

  function save(event) {
    event.preventDefault();
    var form = event.currentTarget;
    var status = form.querySelector("[data-role=status]");
    var data = new URLSearchParams(new FormData(form));
    data.set("who", who());
    show(status, "saving…", "muted");
    fetch(form.getAttribute("action"), {
      method: "POST",
      body: data,
      headers: { Accept: "application/json" },
      credentials: "same-origin",
    })
      .then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) {
            show(status, body.error || "not saved (" + response.status + ")", "error");
            return;
          }
          show(status, "saved: " + String(body.label) + " by " + body.who, "saved");
          var row = form.closest("tr");
          if (row) {
            row.classList.add("labelled");
          }
        });
      })
      .catch(function (error) {
        show(status, "not saved: " + error, "error");
      });
  }

  function start() {
    var input = document.getElementById("who");
    if (input) {
      var name = storedWho();
      if (name) {
        input.value = name;
      }
      input.addEventListener("change", function () {
        remember(input.value.trim());
      });
    }
    document.querySelectorAll("[data-autosubmit]").forEach(function (element) {
      element.addEventListener("change", function () {
        element.form.submit();
      });
    });
    document.querySelectorAll("form.label-form").forEach(function (form) {
      form.addEventListener("submit", save);
    });
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
