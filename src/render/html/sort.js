document.querySelectorAll("table.sortable").forEach(function (t) {
  t.querySelectorAll("thead tr:last-child th").forEach(function (th, i) {
    th.classList.add("sortable");
    th.addEventListener("click", function () {
      var body = t.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var down = th.getAttribute("data-dir") !== "down";
      th.setAttribute("data-dir", down ? "down" : "up");
      var key = function (r) {
        var c = r.cells[i]; if (!c) return "";
        var v = c.getAttribute("data-v");
        return v !== null && v !== "" && !isNaN(+v) ? +v : c.textContent.trim();
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var o = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return down ? -o : o;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
