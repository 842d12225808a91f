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
  // Times come in the unit their series reads best in (html.py `_unit`): back to seconds once, here.
  function inSeconds(values, unit) { return values.map(function (v) { return v === null ? null : v * unit; }); }
  data.benchmarks.forEach(function (b) {
    b.methods.forEach(function (m) {
      if (m.series) m.series.runs.forEach(function (r) { r.A.v = inSeconds(r.A.v, m.series.unit); r.B.v = inSeconds(r.B.v, m.series.unit); });
      if (m.pairs) { m.pairs.a = inSeconds(m.pairs.a, m.pairs.unit); m.pairs.b = inSeconds(m.pairs.b, m.pairs.unit); }
    });
  });

  // ---- summary-level charts ---------------------------------------------------------------------
  // One row per benchmark, one horizontal interval per method: the forest plot and the CI-width plot.
  function dotRows(parent, title, items, opts) {
    var names = [];
    items.forEach(function (it) { if (names.indexOf(it.benchmark) < 0) names.push(it.benchmark); });
    var methods = data.methods.filter(function (m) { return items.some(function (it) { return it.method === m; }); });
    var rowH = 8 + 7 * methods.length;
    var width = C.spanWidth(parent, 1100, 440), labels = Math.min(260, Math.round(width * 0.3));
    var c = chart(parent, title, width, 70 + rowH * names.length, { l: labels, r: 30, t: 24, b: 40 }, opts.note);
    var values = [];
    items.forEach(function (it) { values.push(it.lo, it.hi, it.v); });
    if (opts.ref !== undefined) values.push(opts.ref);
    // On a log axis a bound at or below 0 (an unbounded Fieller interval from two or three runs) has no
    // place: the axis spans the positive values and such a bound is drawn to the left edge.
    if (opts.log) values = values.filter(function (v) { return v !== null && v > 0; });
    var d = extent(values);
    var scale = opts.log ? logScale([d[0] / 1.02, d[1] * 1.02], [0, c.w]) : linear(pad(Math.min(0, d[0]), d[1], 0.03), [0, c.w]);
    var x = opts.log ? function (v) { return v > 0 ? scale(v) : 0; } : scale;
    x.ticks = scale.ticks;
    xAxis(c, x, opts.xlabel, opts.fmt, Math.max(4, Math.round(c.w / 80)));
    if (opts.ref !== undefined) el("line", { "class": "ref", x1: x(opts.ref), x2: x(opts.ref), y1: 0, y2: c.h }, c.g);
    names.forEach(function (name, i) {
      var y0 = i * rowH;
      if (i % 2) el("rect", { x: 0, y: y0, width: c.w, height: rowH, fill: "#fafafa" }, c.g);
      var label = svgText(c.g, -8, y0 + rowH / 2 + 4, truncate(name, Math.floor(labels / 6.5)), { "text-anchor": "end" });
      tip(label, name);
      label.style.cursor = "pointer";
      label.addEventListener("click", function () { selectBenchmark(name, true); });
    });
    items.forEach(function (it) {
      var i = names.indexOf(it.benchmark), k = methods.indexOf(it.method);
      var y = i * rowH + 7 + k * 7, color = METHOD_COLORS[it.method] || "#333";
      var g = el("g", { "class": "mark" }, c.g);
      // An interval with no upper bound runs to the plot's right edge.
      var xhi = it.open ? c.w : x(it.hi === null ? it.v : it.hi), xlo = x(it.lo === null ? it.v : it.lo);
      if (it.lo !== null && (it.hi !== null || it.open)) el("line", { x1: xlo, x2: xhi, y1: y, y2: y, stroke: color, "stroke-width": 2 }, g);
      el("rect", { x: x(it.v) - 3, y: y - 3, width: 6, height: 6, fill: it.filled ? color : "#fff", stroke: color }, g);
      el("rect", { x: Math.min(xlo, x(it.v)) - 4, y: y - 4, width: Math.abs(xhi - xlo) + 8, height: 8, fill: "transparent" }, g);
      tip(g, it.tip);
      g.style.cursor = "pointer";
      g.addEventListener("click", function () { selectBenchmark(it.benchmark, true); });
    });
    legend(c, methods.map(function (m) { return [m, METHOD_COLORS[m] || "#333"]; }));
  }

  function drawForest() {
    var host = document.getElementById("forest");
    var items = data.rows.filter(function (r) { return r.estimate !== undefined && r.estimate !== null; }).map(function (r) {
      return { benchmark: r.benchmark, method: r.method, v: r.estimate, lo: r.low, hi: r.high, open: !!r.unbounded,
               filled: r.verdict !== "no difference",
               tip: r.benchmark + " · " + r.method + "\nB/A " + num(r.estimate) + "  " + C.interval(r.low, r.high, r.unbounded) +
                    "\n" + r.verdict + (r.runs !== null ? ", " + r.runs + " runs" : "") };
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
    if (st.runtime && st.runtime.length) runtime(host, st.runtime);
  }

  // Machine time of one run of every benchmark: sequential (A then B) against each duet method (A with B).
  function runtime(parent, items) {
    var rowH = 22, gap = 18;
    var c = chart(parent, "Machine time of one run of every benchmark", 560, 70 + items.length * (2 * rowH + gap),
                  { l: 90, r: 120, t: 24, b: 40 }, "Timestamps of each run's first and last iteration, warm-ups "
                  + "included: sequential adds A's run to B's, a duet takes the time from the first start to the last end.");
    var top = 0;
    items.forEach(function (it) { top = Math.max(top, it.sequential || 0, it.paired || 0); });
    var x = linear([0, top * 1.05 || 1], [0, c.w]);
    xAxis(c, x, "machine time", seconds, 5);
    items.forEach(function (it, i) {
      var y0 = i * (2 * rowH + gap);
      [["sequential", it.sequential, METHOD_COLORS.sequential], [it.method, it.paired, METHOD_COLORS[it.method] || "#333"]]
        .forEach(function (bar, k) {
          if (bar[1] === null) return;
          var y = y0 + k * rowH;
          svgText(c.g, -8, y + rowH / 2 + 4, bar[0], { "text-anchor": "end" });
          var r = el("rect", { x: 0, y: y + 3, width: Math.max(1, x(bar[1])), height: rowH - 6, fill: bar[2] }, c.g);
          tip(r, bar[0] + ": " + seconds(bar[1]) + " per run of the " + it.benchmarks + " benchmark(s) measured both ways");
          var label = seconds(bar[1]);
          if (k === 1 && it.sequential) {
            var saved = it.sequential - it.paired;
            label += "  (" + (saved >= 0 ? "−" : "+") + pct(Math.abs(saved) / it.sequential) + ")";
          }
          svgText(c.g, x(bar[1]) + 6, y + rowH / 2 + 4, label, {});
        });
    });
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

  // Every run's first iterations of A and B on one time axis (ms since that run's first iteration), a row
  // of three lanes per run: A, the time both ran, B. Rows one under another show whether the barrier held
  // (duet) or how far the sides drifted (aduet) in each run, not only the first.
  function timeline(parent, m) {
    var t = m.timeline, laneH = 7, rowH = 3 * laneH + 9;
    var c = chart(parent, "A and B side by side in time (" + m.method + ", " + (t.runs.length < t.runs_total ?
                  t.runs.length + " of " + t.runs_total + " runs" : "every run") + ")", 640, 70 + t.runs.length * rowH,
                  { l: 64, r: 14, t: 24, b: 44 },
                  "Per run: A (top), both running (middle; darker for a higher overlap), B (bottom); pale: warm-up. " +
                  (t.total > t.shown ? "The first " + t.per_run + " iterations of A in each run (" + t.shown + " of " +
                   t.total + ") and B's iterations beside them." : "Every iteration."));
    var hi = 0;
    t.runs.forEach(function (r) { r.A.concat(r.B).forEach(function (b) { hi = Math.max(hi, b[1]); }); });
    var x = linear([0, hi || 1], [0, c.w]);
    xAxis(c, x, "ms since the run's first iteration", num, 8);
    function bar(y, b0, b1, fill, opacity, text) {
      var r = el("rect", { x: x(b0), y: y, width: Math.max(0.8, x(b1) - x(b0) - 0.5), height: laneH - 1, fill: fill,
                           "fill-opacity": opacity, "class": "tl-bar" }, c.g);
      tip(r, text);
    }
    t.runs.forEach(function (r, k) {
      var y0 = k * rowH;
      svgText(c.g, -8, y0 + 1.5 * laneH + 4, "run " + r.run, { "text-anchor": "end" });
      [["A", r.A, 0, SIDE.A], ["B", r.B, 2 * laneH, SIDE.B]].forEach(function (lane) {
        lane[1].forEach(function (b, i) {
          bar(y0 + lane[2], b[0], b[1], lane[3], b[2] ? 0.3 : 0.85, lane[0] + " · run " + r.run + ", iteration " + i +
              (b[2] ? " (warm-up)" : "") + "\n" + num(b[1] - b[0]) + " ms, from " + num(b[0]) + " to " + num(b[1]) + " ms");
        });
      });
      r.o.forEach(function (o) {
        bar(y0 + laneH, o[0], o[1], SIDE.both, 0.35 + 0.6 * (o[2] || 0), "run " + r.run + ": both running for " +
            num(o[1] - o[0]) + " ms\noverlap rate " + pct(o[2]));
      });
    });
    legend(c, [["A", SIDE.A], ["both", SIDE.both], ["B", SIDE.B]]);
  }

  function histogram(parent, m) {
    var h = m.hist;
    C.distribution(parent, "Distribution of iteration times (" + m.method + ")", h, { width: 420, height: 260,
      xlabel: "iteration time", unit: "iterations",
      note: h.nA + " measured iterations of A and " + h.nB + " of B over " + h.A.length + " shared bins (Freedman–" +
            "Diaconis width); dashed: each side's median; the extreme 1% fold into the end bins." });
  }

  // What a plot of runs says when a campaign has more runs than it draws (html.py MAX_PLOTTED_RUNS).
  function someRuns(s) {
    return s.runs_total > s.runs.length ? "; " + s.runs.length + " of the " + s.runs_total + " runs, evenly spaced " +
      "(the first and the last among them)" : "";
  }

  // Where the values of a run thinned to k of its n sit: html.py's `_spread`, in the same integer arithmetic.
  function positions(n, k) {
    var out = [];
    for (var i = 0; i < k; i++) out.push(k >= n ? i : Math.floor((i * (n - 1) + Math.floor((k - 1) / 2)) / (k - 1)));
    return out;
  }

  // Each side's iteration times, run after run: drifts within a run (warm-up, throttling) and between runs.
  function series(parent, m) {
    var s = m.series;
    var lengths = s.runs.map(function (r) { return Math.max(r.A.n, r.B.n); });
    var off = C.runOffsets(lengths);
    var measured = [];
    s.runs.forEach(function (r) {
      ["A", "B"].forEach(function (side) {
        var d = r[side], at = positions(d.n, d.v.length);
        d.v.forEach(function (v, i) { if (at[i] >= d.w) measured.push(v); });
      });
    });
    var d = C.robustExtent(measured.length ? measured : [].concat.apply([], s.runs.map(function (r) { return r.A.v.concat(r.B.v); })), 0.005);
    var c = chart(parent, "Iteration times over the runs (" + m.method + ")", 620, 280, { l: 64, r: 14, t: 40, b: 44 },
                  "Each run's iterations in the order measured, runs one after another" +
                  (s.shown < s.total ? " (evenly spaced " + s.shown + " of " + s.total + " shown)" : "") +
                  someRuns(s) + ". Pale: warm-up iterations; a value beyond the axis sits at its edge as a hollow mark.");
    var x = linear([-1, off.end], [0, c.w]);
    var y = linear(pad(d[0], d[1], 0.08), [c.h, 0]);
    var ylo = pad(d[0], d[1], 0.08)[0], yhi = pad(d[0], d[1], 0.08)[1];
    C.runBands(c, x, s.runs.map(function (r) { return r.run; }), off.starts, lengths);
    yAxis(c, y, "time per iteration", seconds, 5);
    el("line", { "class": "axis-line", x1: 0, x2: c.w, y1: c.h, y2: c.h, stroke: "#999" }, c.g);
    svgText(c.g, c.w / 2, c.h + 18, "iterations, run after run", { "text-anchor": "middle" });
    s.runs.forEach(function (r, k) {
      ["A", "B"].forEach(function (side) {
        var dd = r[side], pts = [], at = positions(dd.n, dd.v.length);
        dd.v.forEach(function (v, i) {
          if (v === null) return;
          var pos = at[i], warm = pos < dd.w, out = v < ylo || v > yhi;
          var px = x(off.starts[k] + pos), py = y(C.clamp(v, ylo, yhi));
          if (!warm) pts.push(px + "," + py);
          var dot = el("circle", { cx: px, cy: py, r: out ? 2.6 : 1.9, fill: out ? "#fff" : SIDE[side],
                                   stroke: SIDE[side], "fill-opacity": warm ? 0.3 : 0.9, "stroke-opacity": warm ? 0.4 : 1,
                                   "class": "it-" + side }, c.g);
          tip(dot, side + " · run " + r.run + ", iteration " + pos + (warm ? " (warm-up)" : "") + ": " + seconds(v));
        });
        if (pts.length > 1) el("polyline", { points: pts.join(" "), fill: "none", stroke: SIDE[side], "stroke-width": 1,
                                             "stroke-opacity": 0.55 }, c.g);
      });
    });
    legend(c, [["A", SIDE.A], ["B", SIDE.B]], -28);
  }

  // B/A of every pair (one per run for sequential), run after run, with the CI of the summary as a band.
  function ratios(parent, m, row) {
    var s = m.ratios;
    var lengths = s.runs.map(function (r) { return r.n; });
    var off = C.runOffsets(lengths);
    var values = [].concat.apply([], s.runs.map(function (r) { return r.v; }));
    // An unbounded CI (no upper bound) is a band up to the plot's top edge.
    var open = !!(row && row.unbounded);
    var ci = row && row.low !== undefined && row.low !== null && (row.high !== null || open) ? [row.low, open ? Infinity : row.high] : null;
    var d = C.robustExtent(values, 0.005);
    var dom = pad(Math.min(d[0], 1, ci ? ci[0] : Infinity), Math.max(d[1], 1, ci && !open ? ci[1] : -Infinity), 0.08);
    var c = chart(parent, "B/A over the runs (" + m.method + ")", 620, 280, { l: 64, r: 14, t: 40, b: 44 },
                  "Pairs: " + s.kind + someRuns(s) + ". Black: each run's geometric mean" + (ci ? "; band: the " +
                  pct(data.confidence) + " CI of B/A, solid line its estimate" : "") + "; dashed: 1 (no change).");
    var x = linear([-1, off.end], [0, c.w]);
    var y = linear(dom, [c.h, 0]);
    C.runBands(c, x, s.runs.map(function (r) { return r.run; }), off.starts, lengths);
    yAxis(c, y, "B/A", num, 5);
    el("line", { x1: 0, x2: c.w, y1: c.h, y2: c.h, stroke: "#999" }, c.g);
    svgText(c.g, c.w / 2, c.h + 18, m.method === "sequential" ? "runs" : "pairs, run after run", { "text-anchor": "middle" });
    if (ci) {
      var top = Math.min(ci[1], dom[1]);
      var band = el("rect", { x: 0, width: c.w, y: y(top), height: Math.max(1, y(ci[0]) - y(top)), fill: SIDE.both,
                              "fill-opacity": 0.15, "class": "ci-band" }, c.g);
      tip(band, pct(data.confidence) + " CI of B/A: " + C.interval(ci[0], row.high, open));
      el("line", { x1: 0, x2: c.w, y1: y(row.estimate), y2: y(row.estimate), stroke: SIDE.both, "stroke-width": 1.5 }, c.g);
    }
    el("line", { "class": "ref", x1: 0, x2: c.w, y1: y(1), y2: y(1) }, c.g);
    s.runs.forEach(function (r, k) {
      var at = positions(r.n, r.v.length);
      r.v.forEach(function (v, i) {
        if (v === null) return;
        var pos = at[i], out = v < dom[0] || v > dom[1];
        var dot = el("circle", { cx: x(off.starts[k] + pos), cy: y(C.clamp(v, dom[0], dom[1])), r: out ? 2.6 : 2,
                                 fill: out ? "#fff" : SIDE.both, stroke: SIDE.both, "fill-opacity": 0.6 }, c.g);
        tip(dot, "run " + r.run + (r.n > 1 ? ", pair " + pos : "") + ": B/A " + num(v));
      });
      if (r.gm !== null && r.n > 1) {
        var seg = el("line", { x1: x(off.starts[k] - 0.4), x2: x(off.starts[k] + r.n - 0.6), y1: y(C.clamp(r.gm, dom[0], dom[1])),
                               y2: y(C.clamp(r.gm, dom[0], dom[1])), stroke: "#111", "stroke-width": 2 }, c.g);
        tip(seg, "run " + r.run + ": geometric mean of its " + r.n + " pair ratios " + num(r.gm));
      }
    });
  }

  // The axis fits the estimates, 1 and the CI of all runs, and at most as much again on each side: the CI
  // of the first two or three runs can be a hundred times wider and would flatten the rest of the curve.
  function narrowingDomain(points) {
    var est = finite(points.map(function (p) { return p[1]; })).concat([1]);
    var last = points[points.length - 1];
    var core = extent(est.concat(finite([last[2], last[3]])));
    var bounds = extent(est.concat(finite([].concat.apply([], points.map(function (p) { return [p[2], p[3]]; })))));
    var span = (core[1] - core[0]) || Math.abs(core[0]) * 0.1 || 1;
    var dom = [Math.max(bounds[0], core[0] - span), Math.min(bounds[1], core[1] + span)];
    var open = points.some(function (p) { return p[4] === 1; });
    return { domain: pad(dom[0], dom[1], 0.08), cut: open || dom[0] > bounds[0] || dom[1] < bounds[1] };
  }

  function narrowing(parent, m) {
    var d = narrowingDomain(m.narrowing);
    lines(parent, "CI as runs accumulate (" + m.method + ")", [{
      // A point's fifth element 1: its CI has no upper bound (null in the JSON), drawn up to the top edge.
      name: m.method, color: METHOD_COLORS[m.method] || "#333",
      points: m.narrowing.map(function (p) { return p[4] === 1 ? [p[0], p[1], p[2], Infinity, 1] : p; }),
      tip: function (p) { return "first " + p[0] + " runs\nB/A " + num(p[1]) + " " + C.interval(p[2], p[3], p[4] === 1); }
    }], { width: 360, height: 240, xlabel: "runs", ylabel: "B/A", yref: 1, xint: true, ydomain: d.domain,
          note: "The CI recomputed on the first k runs (for sequential, from the runs' means); a trend, not a result to quote." +
                (d.cut ? " The widest early CIs run off the axis (hover for their bounds)." : "") });
  }

  // The commands of the selected benchmark, above its plots.
  function showCommands(name) {
    var table = document.getElementById("benchmark-commands");
    while (table.firstChild) table.removeChild(table.firstChild);
    // A harness run holding several benchmarks (a JMH jar) reports them as "<campaign benchmark>/<name>".
    var commands = data.commands || {}, key = null;
    Object.keys(commands).forEach(function (k) {
      if ((name === k || name.indexOf(k + "/") === 0) && (key === null || k.length > key.length)) key = k;
    });
    if (key === null) return;
    var sides = commands[key];
    ["A", "B"].forEach(function (side) {
      if (sides[side] === undefined) return;
      var tr = html("tr", null, null, table);
      html("th", null, side === "A" ? "A (baseline)" : "B (candidate)", tr);
      var td = html("td", null, null, tr);
      html("pre", null, side === "B" && sides.B === sides.A ? sides.B + "   (same as A: an A/A benchmark)" : sides[side], td);
    });
  }

  // One line above a method's plots: the verdict, B/A with its CI, and each side's time per iteration.
  function headline(parent, r) {
    var p = html("p", "headline", null, parent);
    if (!r || r.estimate === undefined || r.estimate === null) {
      html("span", "problem", r && r.problem ? r.problem : "not analysed", p);
      return;
    }
    html("span", "verdict " + ({ slower: "slower", faster: "faster" }[r.verdict] || "same"), r.change || r.verdict, p);
    // "no difference" already says B/A; "B is 4.8% slower" does not.
    html("span", null, (r.change && r.change.indexOf("B/A") >= 0 ? "" : " · B/A " + num(r.estimate) + " " +
                        C.interval(r.low, r.high, r.unbounded)) + " · ", p);
    html("span", "side-a", "A " + seconds(r.a_median), p);
    html("span", null, ", ", p);
    html("span", "side-b", "B " + seconds(r.b_median), p);
    html("span", null, " per iteration (median) · " + r.runs + (r.method === "sequential" ? " runs per side" : " pairs"), p);
  }

  function drawBenchmark(index) {
    var host = document.getElementById("benchmark-plots");
    while (host.firstChild) host.removeChild(host.firstChild);
    var b = data.benchmarks[index];
    if (!b) return;
    showCommands(b.name);
    var rows = data.rows.filter(function (r) { return r.benchmark === b.name; });
    rows.forEach(function (r) {
      if (r.problem) html("p", "problem", r.method + ": " + r.problem, host);
    });
    if (!b.methods.length) html("p", "hint", "No measured iterations of this benchmark.", host);
    b.methods.forEach(function (m) {
      var block = html("div", "method-block", null, host);
      html("h3", null, b.name + " — " + m.method, block);
      var row = rows.filter(function (r) { return r.method === m.method; })[0];
      headline(block, row);
      var over = html("div", "plot-row", null, block);
      if (m.series) series(over, m);
      if (m.ratios && m.ratios.runs.length) ratios(over, m, row);
      var more = html("div", "plot-row", null, block);
      if (m.hist) histogram(more, m);
      if (m.pairs) scatter(more, m);
      if (m.narrowing && m.narrowing.length) narrowing(more, m);
      if (m.timeline) timeline(more, m);
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
          return isFinite(n) || n === Infinity ? n : null;  // Infinity: an unbounded CI's width
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
  document.getElementById("needs-script").remove();  // drawn: the note for a page whose script did not run goes
})();
