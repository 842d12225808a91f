// duetbench comparisons' report: draws each comparison's plots from the embedded JSON as SVG.
// Text from the data enters the page only through textContent or setAttribute, never as markup.
(function () {
  "use strict";
  var C = DuetCharts;
  var el = C.el, html = C.html, tip = C.tip, num = C.num, seconds = C.seconds, extent = C.extent, pad = C.pad;
  var linear = C.linear, logScale = C.logScale, chart = C.chart, xAxis = C.xAxis, yAxis = C.yAxis;
  var legend = C.legend, svgText = C.svgText, truncate = C.truncate, SIDE = C.SIDE;
  var data = JSON.parse(document.getElementById("duet-data").textContent);

  // Every comparison's B/A with its CI on one log axis: a scan's combinations one under the other.
  function forest(host) {
    var rows = data.comparisons.filter(function (c) { return c.estimate !== undefined && c.estimate !== null; });
    if (!rows.length) return;
    var rowH = 18;
    var width = C.spanWidth(host, 1100, 440), labels = Math.min(300, Math.round(width * 0.3));
    var c = chart(host, "B/A and CI of every comparison", width, 70 + rowH * rows.length, { l: labels, r: 30, t: 24, b: 40 },
                  "Log scale, 1 = no change. Filled mark: the CI excludes 1.");
    var values = [1];
    rows.forEach(function (r) { values.push(r.low, r.high, r.estimate); });
    var d = extent(values.filter(function (v) { return v !== null && v > 0; }));
    var x = logScale([d[0] / 1.02, d[1] * 1.02], [0, c.w]);
    xAxis(c, x, "B/A (log scale)", num, Math.max(4, Math.round(c.w / 80)));
    el("line", { "class": "ref", x1: x(1), x2: x(1), y1: 0, y2: c.h }, c.g);
    rows.forEach(function (r, i) {
      var y = i * rowH + rowH / 2, color = r.verdict === "slower" ? "#c0392b" : r.verdict === "faster" ? "#1e8449" : "#555";
      svgText(c.g, -8, y + 4, truncate(r.label, Math.floor(labels / 6.5)), { "text-anchor": "end" });
      var g = el("g", { "class": "mark" }, c.g);
      if (r.low !== null && (r.high !== null || r.unbounded)) {  // no upper bound: to the right edge
        el("line", { x1: r.low > 0 ? x(r.low) : 0, x2: r.unbounded ? c.w : x(r.high), y1: y, y2: y, stroke: color,
                     "stroke-width": 2 }, g);
      }
      el("rect", { x: x(r.estimate) - 4, y: y - 4, width: 8, height: 8, stroke: color,
                   fill: r.verdict === "no difference" ? "#fff" : color }, g);
      tip(g, r.label + "\nB/A " + num(r.estimate) + " " + C.interval(r.low, r.high, r.unbounded) + "\n" + r.verdict);
    });
  }

  function times(parent, cmp) {
    var series = ["A", "B"].map(function (side) {
      return { name: cmp.method === "single" ? truncate(cmp.subject, 30) : side + ": " + truncate(cmp.names[side], 24),
               color: SIDE[side],
               points: cmp.times[side].map(function (v, i) { return [i + 1, v]; }),
               tip: function (p) { return (cmp.method === "single" ? "" : side + " ") + "run " + p[0] + ": " +
                                          seconds(p[1]); } };
    }).filter(function (s) { return s.points.length; });
    if (!series.length) return;
    C.lines(parent, "Times over runs (" + cmp.metric + ")", series, { width: 520, height: 280, xlabel: "run",
      ylabel: cmp.metric + " time", yfmt: seconds, xint: true, legend: true,
      note: "Each side's measured runs in the order they ran (warm-ups left out)." });
  }

  function ratios(parent, cmp) {
    var r = cmp.ratios;
    if (!r || !r.values.length) return;
    var c = chart(parent, "B/A of each pair over runs", 520, 280, { l: 64, r: 20, t: 24, b: 44 }, "Pairs: " + r.kind + "." +
                  (cmp.low !== undefined && cmp.low !== null ? " Band: the CI of B/A; dashed: 1." : ""));
    var ys = r.values.concat([1]);
    if (cmp.low !== undefined) ys.push(cmp.low, cmp.high);
    var x = linear(pad(1, Math.max(2, r.values.length), 0.03), [0, c.w]);
    var y = linear(pad.apply(null, extent(ys).concat([0.08])), [c.h, 0]);
    var xt = x.ticks;
    x.ticks = function (n) { return xt(n).filter(function (v) { return v === Math.round(v); }); };
    xAxis(c, x, "pair", num, 6);
    yAxis(c, y, "B/A", num, 5);
    if (cmp.low !== undefined && cmp.low !== null && (cmp.high !== null || cmp.unbounded)) {
      var top = cmp.unbounded ? 0 : y(cmp.high);  // no upper bound: up to the plot's top edge
      el("rect", { x: 0, width: c.w, y: top, height: Math.max(1, y(cmp.low) - top), fill: SIDE.both,
                   "fill-opacity": 0.12 }, c.g);
    }
    el("line", { "class": "ref", x1: 0, x2: c.w, y1: y(1), y2: y(1) }, c.g);
    var pts = [];
    r.values.forEach(function (v, i) { if (v !== null) pts.push([i + 1, v]); });
    el("polyline", { points: pts.map(function (p) { return x(p[0]) + "," + y(p[1]); }).join(" "), fill: "none",
                     stroke: SIDE.both, "stroke-opacity": 0.5 }, c.g);
    pts.forEach(function (p) {
      tip(el("circle", { cx: x(p[0]), cy: y(p[1]), r: 3, fill: SIDE.both }, c.g), "pair " + p[0] + ": B/A " + num(p[1]));
    });
  }

  function histogram(parent, cmp) {
    var h = cmp.hist;
    if (!h) return;
    // One command benchmarked on its own has no B: its distribution alone, named by the command.
    var single = cmp.method === "single";
    C.distribution(parent, single ? "Distribution of " + truncate(cmp.subject, 40) : "Distributions of A and B", h,
      { width: 520, height: 280, xlabel: cmp.metric + " time", unit: "runs", single: single,
        note: (single ? h.nA + " runs, " : h.nA + " runs of A, " + h.nB + " of B, ") + h.A.length + " shared bins; " +
        "dashed: " + (single ? "the median" : "each side's median") + "; the extreme 1% fold into the end bins." });
  }

  forest(document.getElementById("forest"));
  document.querySelectorAll("[data-comparison]").forEach(function (row) {
    var cmp = data.comparisons[Number(row.dataset.comparison)];
    times(row, cmp);
    ratios(row, cmp);
    histogram(row, cmp);
  });
  C.tooltips();
  // How many plots the page shows: read by the browser test, harmless otherwise.
  document.body.dataset.rendered = String(document.querySelectorAll("svg.chart").length);
  document.getElementById("needs-script").remove();  // drawn: the note for a page whose script did not run goes
})();
