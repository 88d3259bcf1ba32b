(function () {
  "use strict";
  // Sorts tables by a clicked header and filters the findings; the page
  // reads fully without it.
  function key(cell) {
    var v = cell.getAttribute("data-sort");
    if (v === null) { v = cell.textContent.trim(); }
    var n = parseFloat(v);
    return (v !== "" && !isNaN(n) && isFinite(v)) ? n : v.toLowerCase();
  }
  function compare(x, y) {
    if (typeof x !== typeof y) { return typeof x === "number" ? -1 : 1; }
    return x === y ? 0 : (x > y ? 1 : -1);
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    if (!table.tHead || !table.tBodies.length) { return; }
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.classList.add("sort");
      th.title = "sort";
      th.addEventListener("click", function () {
        var up = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var c = compare(key(a.cells[col]), key(b.cells[col]));
          return up ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var filter = document.getElementById("finding-filter");
  if (filter) {
    filter.hidden = false;
    filter.addEventListener("input", function () {
      var q = filter.value.toLowerCase();
      Array.prototype.forEach.call(document.querySelectorAll("#findings ul.items li, #findings p.folder-group.one, #findings .place, #findings table.folder-index tbody tr"), function (tr) {
        tr.hidden = q !== "" && tr.textContent.toLowerCase().indexOf(q) === -1;
      });
    });
  }
})();
