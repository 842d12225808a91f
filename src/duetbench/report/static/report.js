// duetbench report: draws the plots of the embedded JSON as SVG and wires the interaction.
// Everything from the data enters the page through textContent or setAttribute, never as markup,
// so names from configs and commands cannot inject anything.
(function () {
  "use strict";
  var C = DuetCharts;
  var METHOD_COLORS = C.METHOD_COLORS;
  var RUN_COLORS = C.RUN_COLORS;
  var SIDE = C.SIDE;
  var el = C.el;
  var html = C.html;
  var svgText = C.svgText;
  var tip = C.tip;
  var num = C.num;
  var seconds = C.seconds;
  var pct = C.pct;
  var finite = C.finite;
  var extent = C.extent;
  var pad = C.pad;
  var linear = C.linear;
  var logScale = C.logScale;
  var chart = C.chart;
  var xAxis = C.xAxis;
  var yAxis = C.yAxis;
  var legend = C.legend;
  var truncate = C.truncate;
  var lines = C.lines;
  var data = JSON.parse(document.getElementById("duet-data").textContent);

  // ---- summary-level charts ---------------------------------------------------------------------
  // One row per benchmark, one horizontal interval per method: the forest plot and the CI-width plot.
  function dotRows(parent, title, items, opts) {
    var names = [];
    items.forEach(function (it) { if (names.indexOf(it.benchmark) < 0) names.push(it.benchmark); });
    var methods = data.methods.filter(function (m) { return items.some(function (it) { return it.method === m; }); });
    var rowH = 8 + 7 * methods.length;
    var c = chart(parent, title, 1100, 70 + rowH * names.length, { l: 260, r: 30, t: 24, b: 40 }, opts.note);
    var values = [];
    items.forEach(function (it) { values.push(it.lo, it.hi, it.v); });
    if (opts.ref !== undefined) values.push(opts.ref);
    var d = extent(values);
    var x = opts.log ? logScale([d[0] / 1.02, d[1] * 1.02], [0, c.w]) : linear(pad(Math.min(0, d[0]), d[1], 0.03), [0, c.w]);
    xAxis(c, x, opts.xlabel, opts.fmt, 10);
    if (opts.ref !== undefined) el("line", { "class": "ref", x1: x(opts.ref), x2: x(opts.ref), y1: 0, y2: c.h }, c.g);
    names.forEach(function (name, i) {
      var y0 = i * rowH;
      if (i % 2) el("rect", { x: 0, y: y0, width: c.w, height: rowH, fill: "#fafafa" }, c.g);
      var label = svgText(c.g, -8, y0 + rowH / 2 + 4, truncate(name, 40), { "text-anchor": "end" });
      tip(label, name);
      label.style.cursor = "pointer";
      label.addEventListener("click", function () { selectBenchmark(name, true); });
    });
    items.forEach(function (it) {
      var i = names.indexOf(it.benchmark), k = methods.indexOf(it.method);
      var y = i * rowH + 7 + k * 7, color = METHOD_COLORS[it.method] || "#333";
      var g = el("g", { "class": "mark" }, c.g);
      if (it.lo !== null && it.hi !== null) el("line", { x1: x(it.lo), x2: x(it.hi), y1: y, y2: y, stroke: color, "stroke-width": 2 }, g);
      el("rect", { x: x(it.v) - 3, y: y - 3, width: 6, height: 6, fill: it.filled ? color : "#fff", stroke: color }, g);
      el("rect", { x: Math.min(x(it.lo === null ? it.v : it.lo), x(it.v)) - 4, y: y - 4,
                   width: Math.abs(x(it.hi === null ? it.v : it.hi) - x(it.lo === null ? it.v : it.lo)) + 8,
                   height: 8, fill: "transparent" }, g);
      tip(g, it.tip);
      g.style.cursor = "pointer";
      g.addEventListener("click", function () { selectBenchmark(it.benchmark, true); });
    });
    legend(c, methods.map(function (m) { return [m, METHOD_COLORS[m] || "#333"]; }));
  }

  function drawForest() {
    var host = document.getElementById("forest");
    var items = data.rows.filter(function (r) { return r.estimate !== undefined && r.estimate !== null; }).map(function (r) {
      return { benchmark: r.benchmark, method: r.method, v: r.estimate, lo: r.low, hi: r.high,
               filled: r.verdict !== "no difference",
               tip: r.benchmark + " · " + r.method + "\nB/A " + num(r.estimate) + "  [" + num(r.low) + ", " +
                    num(r.high) + "]\n" + r.verdict + (r.runs !== null ? ", " + r.runs + " runs" : "") };
    });
    if (!items.length) { html("p", "hint", "No benchmark could be analysed.", host); return; }
    dotRows(host, "B/A ratio and CI", items, { log: true, ref: 1, xlabel: "B/A (log scale)", fmt: num,
      note: "Filled mark: the CI excludes 1 (B slower or faster); hollow: no difference detected." });
  }

  function drawCiWidths() {
    var host = document.getElementById("ci-widths");
    var items = data.rows.filter(function (r) { return r.rcw !== undefined && r.rcw !== null; }).map(function (r) {
      return { benchmark: r.benchmark, method: r.method, v: r.rcw, lo: null, hi: null, filled: true,
               tip: r.benchmark + " · " + r.method + "\nrelative CI width " + pct(r.rcw) };
    });
    if (!items.length) { html("p", "hint", "No CI widths to compare.", host); return; }
    var medians = data.methods.map(function (m) {
      var v = items.filter(function (it) { return it.method === m; }).map(function (it) { return it.v; }).sort(function (a, b) { return a - b; });
      return v.length ? m + " " + pct(v[Math.floor((v.length - 1) / 2)]) : null;
    }).filter(Boolean);
    dotRows(host, "Relative CI width per benchmark and method", items, { log: false, xlabel: "relative CI width",
      fmt: pct, note: "Median per method: " + medians.join(", ") + "." });
  }

  function bars(parent, title, entries, opts) {
    var c = chart(parent, title, 40 + Math.max(280, 90 * entries.length), 280, { l: 64, r: 16, t: 24, b: 40 }, opts.note);
    var vals = entries.map(function (e) { return e.value; });
    if (opts.yref !== undefined) vals.push(opts.yref);
    var top = Math.max.apply(null, finite(vals).concat([0]));
    var bottom = Math.min.apply(null, finite(vals).concat([0]));
    var y = linear(pad(bottom, top, 0.08), [c.h, 0]);
    yAxis(c, y, opts.ylabel, opts.fmt, 5);
    var bw = c.w / entries.length;
    entries.forEach(function (e, i) {
      if (e.value === null) return;
      var r = el("rect", { x: i * bw + bw * 0.2, width: bw * 0.6, y: Math.min(y(e.value), y(0)),
                           height: Math.abs(y(0) - y(e.value)), fill: METHOD_COLORS[e.label] || "#4c78a8" }, c.g);
      tip(r, e.label + ": " + opts.fmt(e.value));
      svgText(c.g, i * bw + bw / 2, c.h + 16, truncate(e.label, 16), { "text-anchor": "middle" });
    });
    el("line", { "class": "axis", x1: 0, x2: c.w, y1: y(0), y2: y(0), stroke: "#999" }, c.g);
    if (opts.yref !== undefined) el("line", { "class": "ref", x1: 0, x2: c.w, y1: y(opts.yref), y2: y(opts.yref) }, c.g);
  }

  function drawStudies() {
    var host = document.getElementById("studies");
    var st = data.studies || {};
    if (st.mds && st.mds.length) {
      lines(host, "Minimal detectable slowdown", st.mds.map(function (s) {
        return { name: s.method, color: METHOD_COLORS[s.method] || "#333", points: s.points,
                 tip: function (p) { return s.method + ": slowdown " + pct(p[0]) + "\njudged equal " + pct(p[1]); } };
      }), { xlabel: "injected slowdown", ylabel: "share judged equal", xfmt: pct, yfmt: pct, ydomain: [0, 1.02],
            legend: true, note: "Share of comparisons that miss an injected slowdown; the faster the curve falls, the smaller the slowdown a method detects." });
    }
    if (st.aa_false_positive_rate) {
      bars(host, "A/A false-positive rate", st.aa_false_positive_rate, { ylabel: "false positives", fmt: pct,
           yref: 1 - data.confidence, note: "Share of A/A comparisons judged different; dashed: the nominal " + pct(1 - data.confidence) + "." });
    }
    if (st.runtime_saving) {
      bars(host, "Runtime saving", st.runtime_saving, { ylabel: "saving", fmt: num });
    }
  }

  // ---- per-benchmark charts ---------------------------------------------------------------------
  function scatter(parent, m) {
    var p = m.pairs;
    var d = pad.apply(null, extent(p.a.concat(p.b)).concat([0.04]));
    var c = chart(parent, "A against B (" + m.method + ")", 330, 320, { l: 64, r: 14, t: 24, b: 44 },
                  p.total > p.shown ? "Pairs: " + p.kind + "; a random " + p.shown + " of " + p.total + " shown."
                                    : "Pairs: " + p.kind + ".");
    var x = linear(d, [0, c.w]), y = linear(d, [c.h, 0]);
    xAxis(c, x, "A", seconds, 4);
    yAxis(c, y, "B", seconds, 5);
    el("line", { "class": "ref", x1: x(d[0]), y1: y(d[0]), x2: x(d[1]), y2: y(d[1]) }, c.g);
    p.a.forEach(function (a, i) {
      var b = p.b[i];
      if (a === null || b === null) return;
      var dot = el("circle", { cx: x(a), cy: y(b), r: 2.6, fill: RUN_COLORS[p.run[i] % RUN_COLORS.length], "fill-opacity": 0.7 }, c.g);
      tip(dot, "run " + p.run[i] + "\nA " + seconds(a) + "\nB " + seconds(b) + "\nB/A " + num(b / a));
    });
  }

  function timeline(parent, m) {
    var t = m.timeline;
    var all = t.A.concat(t.B);
    var x = null;
    var c = chart(parent, "Iteration timeline (" + m.method + ", run " + t.run + ")", 640, 170, { l: 64, r: 14, t: 24, b: 44 },
                  (t.total > t.shown ? "The first " + t.shown + " of " + t.total + " iterations of A and B's iterations beside them. " : "") +
                  "Purple: both sides running; pale: warmup.");
    var lo = Math.min.apply(null, all.map(function (b) { return b[0]; }));
    var hi = Math.max.apply(null, all.map(function (b) { return b[1]; }));
    x = linear([lo, hi], [0, c.w]);
    xAxis(c, x, "ms since the run's first iteration", num, 8);
    var lanes = [["A", 6, SIDE.A], ["both", 36, SIDE.both], ["B", 66, SIDE.B]];
    lanes.forEach(function (l) { svgText(c.g, -8, l[1] + 14, l[0], { "text-anchor": "end" }); });
    [["A", t.A, 6, SIDE.A], ["B", t.B, 66, SIDE.B]].forEach(function (lane) {
      lane[1].forEach(function (b) {
        var r = el("rect", { x: x(b[0]), y: lane[2], width: Math.max(0.8, x(b[1]) - x(b[0]) - 0.5), height: 20,
                             fill: lane[3], "fill-opacity": b[3] ? 0.3 : 0.85 }, c.g);
        tip(r, lane[0] + " iteration " + b[2] + (b[3] ? " (warmup)" : "") + "\n" + num(b[1] - b[0]) + " ms, from " +
               num(b[0]) + " to " + num(b[1]) + " ms");
      });
    });
    t.overlaps.forEach(function (o) {
      var r = el("rect", { x: x(o[0]), y: 36, width: Math.max(0.8, x(o[1]) - x(o[0])), height: 20, fill: SIDE.both,
                           "fill-opacity": 0.35 + 0.6 * (o[2] || 0) }, c.g);
      tip(r, "both running for " + num(o[1] - o[0]) + " ms\noverlap rate " + pct(o[2]));
    });
  }

  function histogram(parent, m) {
    var h = m.hist;
    var c = chart(parent, "Distribution (" + m.method + ")", 360, 240, { l: 52, r: 14, t: 24, b: 44 },
                  h.nA + " A and " + h.nB + " B measured iterations; the extreme 1% fold into the end bins.");
    var x = linear([h.edges[0], h.edges[h.edges.length - 1]], [0, c.w]);
    var top = Math.max.apply(null, h.A.concat(h.B).concat([1]));
    var y = linear([0, top * 1.08], [c.h, 0]);
    xAxis(c, x, "iteration time", seconds, 4);
    yAxis(c, y, "", num, 4);
    [["A", h.A, SIDE.A], ["B", h.B, SIDE.B]].forEach(function (side) {
      side[1].forEach(function (count, i) {
        if (!count) return;
        var r = el("rect", { x: x(h.edges[i]) + 0.5, width: Math.max(0.5, x(h.edges[i + 1]) - x(h.edges[i]) - 1),
                             y: y(count), height: c.h - y(count), fill: side[2], "fill-opacity": 0.45 }, c.g);
        tip(r, side[0] + ": " + count + " iterations in " + seconds(h.edges[i]) + " … " + seconds(h.edges[i + 1]));
      });
    });
    legend(c, [["A", SIDE.A], ["B", SIDE.B]]);
  }

  function narrowing(parent, m) {
    lines(parent, "CI as runs accumulate (" + m.method + ")", [{
      name: m.method, color: METHOD_COLORS[m.method] || "#333", points: m.narrowing,
      tip: function (p) { return "first " + p[0] + " runs\nB/A " + num(p[1]) + " [" + num(p[2]) + ", " + num(p[3]) + "]"; }
    }], { width: 360, height: 240, xlabel: "runs", ylabel: "B/A", yref: 1, xint: true,
          note: "The CI recomputed on the first k runs (fewer bootstrap replicates than the summary)." });
  }

  function drawBenchmark(index) {
    var host = document.getElementById("benchmark-plots");
    while (host.firstChild) host.removeChild(host.firstChild);
    var b = data.benchmarks[index];
    if (!b) return;
    var rows = data.rows.filter(function (r) { return r.benchmark === b.name; });
    rows.forEach(function (r) {
      if (r.problem) html("p", "problem", r.method + ": " + r.problem, host);
    });
    if (!b.methods.length) html("p", "hint", "No measured iterations of this benchmark.", host);
    b.methods.forEach(function (m) {
      var block = html("div", "method-block", null, host);
      html("h3", null, b.name + " — " + m.method, block);
      var row = html("div", "plot-row", null, block);
      if (m.pairs) scatter(row, m);
      if (m.hist) histogram(row, m);
      if (m.narrowing && m.narrowing.length) narrowing(row, m);
      if (m.timeline) timeline(row, m);
      if (!m.pairs && m.method === "sequential") html("p", "plot-note", "Sequential runs of A and B are independent: no pairs and no shared timeline.", block);
    });
    markRendered();
  }

  // ---- interaction ------------------------------------------------------------------------------
  var select = document.getElementById("benchmark-select");
  data.benchmarks.forEach(function (b, i) {
    var o = document.createElement("option");
    o.value = String(i);
    o.textContent = b.name;
    select.appendChild(o);
  });
  select.addEventListener("change", function () { drawBenchmark(Number(select.value)); highlightRows(); rememberBenchmark(); });

  // The selected benchmark lives in the address (#benchmark=NAME), so a link can point at one.
  function rememberBenchmark() {
    var b = data.benchmarks[Number(select.value)];
    if (b) history.replaceState(null, "", "#benchmark=" + encodeURIComponent(b.name));
  }
  function benchmarkFromAddress() {
    var m = /^#benchmark=(.*)$/.exec(location.hash);
    if (!m) return null;
    try { return decodeURIComponent(m[1]); } catch (e) { return null; }  // a hand-edited, malformed address
  }

  function selectBenchmark(name, scroll) {
    for (var i = 0; i < data.benchmarks.length; i++) {
      if (data.benchmarks[i].name === name) {
        select.value = String(i);
        drawBenchmark(i);
        highlightRows();
        rememberBenchmark();
        if (scroll) document.getElementById("benchmark-section").scrollIntoView({ behavior: "smooth" });
        return;
      }
    }
  }
  function highlightRows() {
    var b = data.benchmarks[Number(select.value)];
    document.querySelectorAll("#summary-table tbody tr").forEach(function (tr) {
      tr.classList.toggle("selected", !!b && tr.dataset.benchmark === b.name);
    });
  }

  function sortable(table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir > 0 ? "ascending" : "descending");
        var numeric = th.dataset.type === "num";
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        function key(tr) {
          var cell = tr.cells[col];
          var v = cell ? cell.dataset.v : undefined;
          if (!numeric) return v === undefined ? "" : v;
          var n = parseFloat(v);
          return isFinite(n) ? n : null;
        }
        rows.sort(function (r1, r2) {
          var a = key(r1), b = key(r2);
          if (a === null || b === null) return a === null ? (b === null ? 0 : 1) : -1;  // blanks last
          return (a < b ? -1 : a > b ? 1 : 0) * dir;
        });
        rows.forEach(function (tr) { body.appendChild(tr); });
      });
    });
    table.tBodies[0].addEventListener("click", function (ev) {
      var tr = ev.target.closest("tr");
      if (tr) selectBenchmark(tr.dataset.benchmark, true);
    });
  }

  C.tooltips();

  // How many plots the page shows: read by the browser test, harmless otherwise.
  function markRendered() { document.body.dataset.rendered = String(document.querySelectorAll("svg.chart").length); }

  sortable(document.getElementById("summary-table"));
  drawForest();
  drawCiWidths();
  drawStudies();
  var wanted = benchmarkFromAddress();
  if (wanted !== null && data.benchmarks.some(function (b) { return b.name === wanted; })) selectBenchmark(wanted, false);
  else if (data.benchmarks.length) drawBenchmark(0);
  highlightRows();
  markRendered();
})();
