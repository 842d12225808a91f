// duetbench report: draws the plots of the embedded JSON as SVG and wires the interaction.
// Everything from the data enters the page through textContent or setAttribute, never as markup,
// so names from configs and commands cannot inject anything.
(function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var METHOD_COLORS = { sequential: "#7f7f7f", duet: "#1f6fb4", aduet: "#2ca02c" };
  var RUN_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                    "#bcbd22", "#7f7f7f"];
  var SIDE = { A: "#1f6fb4", B: "#e0711c", both: "#6a3d9a" };
  var data = JSON.parse(document.getElementById("duet-data").textContent);
  var tips = new WeakMap();

  // ---- small helpers ----------------------------------------------------------------------------
  function el(tag, attrs, parent) {
    var node = document.createElementNS(SVG_NS, tag);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) node.setAttribute(k, attrs[k]); }
    if (parent) parent.appendChild(node);
    return node;
  }
  function html(tag, cls, text, parent) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function svgText(parent, x, y, text, attrs) {
    var t = el("text", Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = text;
    return t;
  }
  function tip(node, text) { tips.set(node, text); return node; }
  function num(v) {
    if (v === null || v === undefined || !isFinite(v)) return "—";
    var a = Math.abs(v);
    if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(3);
    return String(Number(v.toPrecision(4)));
  }
  function seconds(v) {
    if (v === null || !isFinite(v)) return "—";
    var a = Math.abs(v);
    if (a >= 1) return num(v) + " s";
    if (a >= 1e-3) return num(v * 1e3) + " ms";
    if (a >= 1e-6) return num(v * 1e6) + " µs";
    return num(v * 1e9) + " ns";
  }
  function pct(v) { return v === null || !isFinite(v) ? "—" : num(v * 100) + "%"; }
  function finite(values) { return values.filter(function (v) { return v !== null && isFinite(v); }); }
  function extent(values) {
    var f = finite(values);
    return f.length ? [Math.min.apply(null, f), Math.max.apply(null, f)] : [0, 1];
  }
  function pad(lo, hi, frac) {
    if (hi <= lo) { var d = Math.abs(lo) * 0.05 || 1; return [lo - d, hi + d]; }
    var p = (hi - lo) * frac;
    return [lo - p, hi + p];
  }
  function ticks(lo, hi, count) {
    var span = hi - lo;
    if (!(span > 0)) return [lo];
    var step = Math.pow(10, Math.floor(Math.log10(span / count)));
    var err = span / count / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
    return out;
  }
  function linear(d, r) {
    var f = function (v) { return r[0] + (v - d[0]) / ((d[1] - d[0]) || 1) * (r[1] - r[0]); };
    f.ticks = function (n) { return ticks(d[0], d[1], n); };
    return f;
  }
  function logScale(d, r) {
    var l0 = Math.log(d[0]), l1 = Math.log(d[1]);
    var f = function (v) { return r[0] + (Math.log(v) - l0) / ((l1 - l0) || 1) * (r[1] - r[0]); };
    f.ticks = function (n) { return ticks(d[0], d[1], n).filter(function (v) { return v > 0; }); };
    return f;
  }

  // A titled SVG chart inside `parent`; returns the plotting group and its inner size.
  function chart(parent, title, width, height, margin, note) {
    var box = html("div", "plot", null, parent);
    html("div", "plot-title", title, box);
    var svg = el("svg", { width: width, height: height, "class": "chart", role: "img", "aria-label": title }, box);
    if (note) html("div", "plot-note", note, box);
    var g = el("g", { transform: "translate(" + margin.l + "," + margin.t + ")" }, svg);
    return { g: g, w: width - margin.l - margin.r, h: height - margin.t - margin.b, svg: svg };
  }
  function xAxis(c, x, label, fmt, n) {
    var g = el("g", { "class": "axis", transform: "translate(0," + c.h + ")" }, c.g);
    el("line", { x1: 0, x2: c.w, y1: 0, y2: 0 }, g);
    x.ticks(n || 6).forEach(function (v) {
      var px = x(v);
      if (px < -0.5 || px > c.w + 0.5) return;
      el("line", { "class": "grid", x1: px, x2: px, y1: 0, y2: -c.h }, g);
      el("line", { x1: px, x2: px, y1: 0, y2: 4 }, g);
      svgText(g, px, 16, fmt(v), { "text-anchor": "middle" });
    });
    if (label) svgText(g, c.w / 2, 32, label, { "text-anchor": "middle" });
  }
  function yAxis(c, y, label, fmt, n) {
    var g = el("g", { "class": "axis" }, c.g);
    el("line", { x1: 0, x2: 0, y1: 0, y2: c.h }, g);
    y.ticks(n || 5).forEach(function (v) {
      var py = y(v);
      if (py < -0.5 || py > c.h + 0.5) return;
      el("line", { "class": "grid", x1: 0, x2: c.w, y1: py, y2: py }, g);
      el("line", { x1: -4, x2: 0, y1: py, y2: py }, g);
      svgText(g, -7, py + 4, fmt(v), { "text-anchor": "end" });
    });
    if (label) svgText(g, -c.h / 2, -48, label, { "text-anchor": "middle", transform: "rotate(-90)" });
  }
  function legend(c, entries) {
    var g = el("g", { transform: "translate(" + (c.w - 4) + ",-14)" }, c.g);
    var x = 0;
    entries.slice().reverse().forEach(function (e) {
      var t = svgText(g, x, 4, e[0], { "text-anchor": "end" });
      x -= e[0].length * 6.2 + 6;
      el("rect", { x: x - 4, y: -4, width: 9, height: 9, fill: e[1] }, g);
      x -= 24;
      return t;
    });
  }
  function truncate(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

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

  function lines(parent, title, series, opts) {
    var c = chart(parent, title, opts.width || 520, opts.height || 300, { l: 64, r: 20, t: 24, b: 44 }, opts.note);
    var xs = [], ys = [];
    series.forEach(function (s) { s.points.forEach(function (p) { xs.push(p[0]); ys.push(p[1], p[2], p[3]); }); });
    if (opts.yref !== undefined) ys.push(opts.yref);
    var x = linear(opts.xdomain || pad.apply(null, extent(xs).concat([0.04])), [0, c.w]);
    if (opts.xint) {
      var xt = x.ticks;
      x.ticks = function (n) { return xt(n).filter(function (v) { return v === Math.round(v); }); };
    }
    var y = linear(opts.ydomain || pad.apply(null, extent(ys).concat([0.08])), [c.h, 0]);
    xAxis(c, x, opts.xlabel, opts.xfmt || num, 6);
    yAxis(c, y, opts.ylabel, opts.yfmt || num, 5);
    if (opts.yref !== undefined) el("line", { "class": "ref", x1: 0, x2: c.w, y1: y(opts.yref), y2: y(opts.yref) }, c.g);
    series.forEach(function (s) {
      var pts = s.points.filter(function (p) { return p[1] !== null; });
      var band = pts.filter(function (p) { return p[2] !== undefined && p[2] !== null && p[3] !== null; });
      if (band.length > 1) {
        var poly = band.map(function (p) { return x(p[0]) + "," + y(p[3]); })
          .concat(band.slice().reverse().map(function (p) { return x(p[0]) + "," + y(p[2]); }));
        el("polygon", { points: poly.join(" "), fill: s.color, "fill-opacity": 0.15, stroke: "none" }, c.g);
      }
      el("polyline", { points: pts.map(function (p) { return x(p[0]) + "," + y(p[1]); }).join(" "), fill: "none",
                       stroke: s.color, "stroke-width": 2 }, c.g);
      pts.forEach(function (p) {
        var g = el("g", {}, c.g);
        if (p[2] !== undefined && p[2] !== null && p[3] !== null) {
          el("line", { x1: x(p[0]), x2: x(p[0]), y1: y(p[2]), y2: y(p[3]), stroke: s.color, "stroke-opacity": 0.6 }, g);
        }
        el("circle", { cx: x(p[0]), cy: y(p[1]), r: 3.5, fill: s.color }, g);
        tip(g, s.tip(p));
      });
    });
    if (series.length > 1 || opts.legend) legend(c, series.map(function (s) { return [s.name, s.color]; }));
    return c;
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

  var tooltip = document.getElementById("tooltip");
  document.addEventListener("mousemove", function (ev) {
    var node = ev.target, text;
    while (node && node !== document && !(text = tips.get(node))) node = node.parentNode;
    if (!text) { tooltip.hidden = true; return; }
    tooltip.textContent = text;
    tooltip.hidden = false;
    tooltip.style.left = Math.min(ev.clientX + 14, window.innerWidth - tooltip.offsetWidth - 8) + "px";
    tooltip.style.top = (ev.clientY + 14) + "px";
  });

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
