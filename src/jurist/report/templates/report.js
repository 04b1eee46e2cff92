// jurist report: sortable tables, the item filters, and each item's messages and replies.
// Judged text is only ever set with textContent, never parsed as HTML.
(function () {
  "use strict";

  var NOTES = {
    notRecorded: "No messages recorded: the item was recorded without its LM calls.",
    baseline: "Baseline judge: no prompt (an offline rule-based judge calls no model).",
    noCalls: "No LM calls recorded for this item.",
    missing: "Nothing recorded for this item in results.sqlite."
  };
  var ROLES = { system: "system", user: "user", assistant: "assistant" };

  var dataNode = document.getElementById("jurist-data");
  var data = dataNode ? JSON.parse(dataNode.textContent) : {};
  var details = data.details || {};
  var messages = data.messages || {};

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function block(label, text, kind) {
    var node = el("div", "block " + (kind || ""));
    node.appendChild(el("div", "label", label));
    node.appendChild(el("pre", null, text));
    return node;
  }

  function textOf(digest) {
    return Object.prototype.hasOwnProperty.call(messages, digest) ? messages[digest] : "[text not found]";
  }

  function inputsText(id) {
    var item = details[id];
    if (!item || !item.inputs) return "";
    return item.inputs.map(function (ref) { return textOf(ref[1]); }).join("\n").toLowerCase();
  }

  function money(value) {
    return value === null || value === undefined ? "cost unknown" : "$" + Number(value).toFixed(6);
  }

  function callFacts(call) {
    var parts = [call.error ? "failed" : call.cache_hit ? "cache hit" : "provider"];
    if (!call.cache_hit && !call.error) {
      parts.push(call.prompt_tokens + " prompt + " + call.completion_tokens + " completion tokens");
      parts.push(money(call.cost));
    }
    if (call.latency_s !== null && call.latency_s !== undefined) {
      parts.push(Number(call.latency_s).toFixed(3) + " s");
    }
    return parts.join(" \u00b7 ");
  }

  function renderDetail(id) {
    var box = el("div", "item-detail");
    var item = details[id];
    if (!item) {
      box.appendChild(el("p", "note", NOTES.missing));
      return box;
    }
    if (item.inputs && item.inputs.length) {
      var judged = el("section", "inputs");
      judged.appendChild(el("h4", null, "judged text"));
      item.inputs.forEach(function (ref) {
        judged.appendChild(block(ref[0], textOf(ref[1]), "input"));
      });
      box.appendChild(judged);
    }
    if (item.error) {
      box.appendChild(block("error", (item.error_type ? item.error_type + ": " : "") + item.error, "error"));
    }
    if (item.output) box.appendChild(block("verdict", JSON.stringify(item.output, null, 2), "verdict"));
    if (item.calls === null || item.calls === undefined) {
      box.appendChild(el("p", "note", NOTES.notRecorded));
    } else if (item.calls.length === 0) {
      var baseline = !data.model || data.model === "baseline";
      box.appendChild(el("p", "note", baseline ? NOTES.baseline : NOTES.noCalls));
    }
    (item.calls || []).forEach(function (call, index) {
      var section = el("section", "call");
      section.appendChild(el("h4", null, "call " + (index + 1) + " \u00b7 attempt " + call.attempt +
        " \u00b7 " + callFacts(call)));
      (call.messages || []).forEach(function (ref) {
        var role = ref[0] || "message";
        var text = Object.prototype.hasOwnProperty.call(messages, ref[1]) ? messages[ref[1]] : "[message not found]";
        section.appendChild(block(role, text, ROLES[role] || "message"));
      });
      (call.replies || []).forEach(function (reply) {
        section.appendChild(block("reply", reply, "reply"));
      });
      if (call.error) section.appendChild(block("error", call.error, "error"));
      box.appendChild(section);
    });
    var raw = item.raw || [];
    box.appendChild(el("h4", null, "raw replies (" + raw.length + ")"));
    raw.forEach(function (text, index) {
      box.appendChild(block("raw reply " + (index + 1), text, "reply raw"));
    });
    return box;
  }

  function sortKey(row, index, numeric) {
    var cell = row.cells[index];
    if (!cell) return null;
    if (numeric) {
      var value = parseFloat(cell.getAttribute("data-sort"));
      return isNaN(value) ? null : value;
    }
    var text = cell.textContent;
    return text === "" ? null : text;
  }

  function compare(a, b, direction) {
    if (a === null && b === null) return 0;
    if (a === null) return 1; // missing values last, whichever the direction
    if (b === null) return -1;
    if (typeof a === "number") return direction * (a - b);
    return direction * a.localeCompare(b, undefined, { numeric: true, sensitivity: "base" });
  }

  function makeSortable(table) {
    var body = table.tBodies[0];
    var headers = table.tHead ? table.tHead.rows[0].cells : [];
    Array.prototype.forEach.call(headers, function (th, index) {
      var button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", function () {
        var direction = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        Array.prototype.forEach.call(headers, function (other) { other.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", direction === 1 ? "ascending" : "descending");
        var numeric = th.getAttribute("data-numeric") === "true";
        var rows = Array.prototype.filter.call(body.rows, function (row) {
          return !row.classList.contains("detail");
        });
        rows.sort(function (a, b) {
          return compare(sortKey(a, index, numeric), sortKey(b, index, numeric), direction);
        });
        rows.forEach(function (row) {
          body.appendChild(row);
          if (row.detailRow) body.appendChild(row.detailRow);
        });
      });
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);

  var table = document.getElementById("items-table");
  if (!table) return;
  var body = table.tBodies[0];
  var items = Array.prototype.slice.call(body.querySelectorAll("tr.item"));
  var text = document.getElementById("filter-text");
  var status = document.getElementById("filter-status");
  var agreement = document.getElementById("filter-agreement");
  var counter = document.getElementById("shown-count");

  function applyFilters() {
    var needle = text.value.trim().toLowerCase();
    var wantStatus = status ? status.value : "";
    var wantAgreement = agreement ? agreement.value : "";
    var shown = 0;
    items.forEach(function (row) {
      if (row.searchText === undefined) {
        row.searchText = row.textContent.toLowerCase() + "\n" + inputsText(row.getAttribute("data-id"));
      }
      var visible = (!needle || row.searchText.indexOf(needle) !== -1) &&
        (!wantStatus || row.getAttribute("data-status") === wantStatus) &&
        (!wantAgreement || row.getAttribute("data-agrees") === wantAgreement);
      row.hidden = !visible;
      if (row.detailRow) row.detailRow.hidden = !visible;
      if (visible) shown += 1;
    });
    counter.textContent = shown + " of " + items.length + " shown";
  }

  function toggle(row) {
    if (row.detailRow) {
      row.detailRow.remove();
      row.detailRow = null;
      row.setAttribute("aria-expanded", "false");
      return;
    }
    var detail = el("tr", "detail");
    var cell = el("td");
    cell.colSpan = row.cells.length;
    cell.appendChild(renderDetail(row.getAttribute("data-id")));
    detail.appendChild(cell);
    row.after(detail);
    row.detailRow = detail;
    row.setAttribute("aria-expanded", "true");
  }

  text.addEventListener("input", applyFilters);
  if (status) status.addEventListener("change", applyFilters);
  if (agreement) agreement.addEventListener("change", applyFilters);
  body.addEventListener("click", function (event) {
    var row = event.target.closest("tr.item");
    if (row) toggle(row);
  });
  body.addEventListener("keydown", function (event) {
    if (event.key !== "Enter" && event.key !== " ") return;
    var row = event.target.closest("tr.item");
    if (row) {
      event.preventDefault();
      toggle(row);
    }
  });
})();
