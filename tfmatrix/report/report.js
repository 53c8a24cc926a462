/* tfmatrix report: sortable tables and the benchmark/target filters. Plain JS, no network. */
(function () {
  "use strict";

  function sortValue(td) {
    if (!td) { return null; }
    var raw = td.getAttribute("data-sort");
    if (raw === null) { raw = td.textContent.trim(); }
    if (raw === "" || raw === "–") { return null; }
    var num = Number(raw);
    return isNaN(num) ? raw.toLowerCase() : num;
  }

  function compare(a, b) {
    if (a === null && b === null) { return 0; }
    if (a === null) { return 1; }           /* empty and n/a cells stay at the bottom */
    if (b === null) { return -1; }
    if (typeof a === "number" && typeof b === "number") { return a - b; }
    if (typeof a === "number") { return -1; }
    if (typeof b === "number") { return 1; }
    return a < b ? -1 : (a > b ? 1 : 0);
  }

  function sortBy(table, th) {
    var col = th.cellIndex;
    var asc = th.getAttribute("aria-sort") !== "ascending";
    var ths = table.tHead.rows[0].cells;
    for (var i = 0; i < ths.length; i++) { ths[i].removeAttribute("aria-sort"); }
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var keyed = rows.map(function (row, index) {
      return { row: row, key: sortValue(row.cells[col]), index: index };
    });
    keyed.sort(function (x, y) {
      if (x.key === null || y.key === null) {
        return compare(x.key, y.key) || x.index - y.index;
      }
      var c = compare(x.key, y.key);
      return (asc ? c : -c) || x.index - y.index;
    });
    keyed.forEach(function (k) { body.appendChild(k.row); });
  }

  function initSorting() {
    var tables = document.querySelectorAll("table.sortable");
    Array.prototype.forEach.call(tables, function (table) {
      if (!table.tHead || !table.tBodies.length) { return; }
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) {
        th.classList.add("sort");
        th.setAttribute("tabindex", "0");
        th.addEventListener("click", function () { sortBy(table, th); });
        th.addEventListener("keydown", function (ev) {
          if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); sortBy(table, th); }
        });
      });
    });
  }

  function applyFilters() {
    var bench = document.getElementById("f-benchmark").value;
    var target = document.getElementById("f-target").value;
    Array.prototype.forEach.call(document.querySelectorAll("[data-benchmark]"), function (el) {
      if (el.tagName === "TABLE") { return; }
      var names = (el.getAttribute("data-benchmark") || "").split(" ");
      var show = !bench || names.indexOf(bench) >= 0 || (names.length === 1 && names[0] === "");
      el.classList.toggle("filtered-b", !show);
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-target]"), function (el) {
      el.classList.toggle("filtered-t", !!target && el.getAttribute("data-target") !== target);
    });
  }

  function initFilters() {
    ["f-benchmark", "f-target"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) { el.addEventListener("change", applyFilters); }
    });
    if (window.location.hash.indexOf("#filter:") === 0) {   /* #filter:benchmark=...&target=... */
      window.location.hash.slice(8).split("&").forEach(function (kv) {
        var parts = kv.split("=");
        var el = document.getElementById("f-" + parts[0]);
        if (el && parts.length === 2) { el.value = decodeURIComponent(parts[1]); }
      });
    }
    applyFilters();
  }

  document.addEventListener("DOMContentLoaded", function () {
    initSorting();
    initFilters();
  });
})();
