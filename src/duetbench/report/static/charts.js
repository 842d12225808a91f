// duetbench reports: the chart helpers every page shares (SVG axes, scales, legends, line charts,
// tooltips). Text from the data enters the page only through textContent or setAttribute, never as markup.
var DuetCharts = (function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var METHOD_COLORS = { sequential: "#7f7f7f", duet: "#1f6fb4", aduet: "#2ca02c" };
  var RUN_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
                    "#bcbd22", "#7f7f7f"];
  var SIDE = { A: "#1f6fb4", B: "#e0711c", both: "#6a3d9a" };
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
  // A ratio's CI as "[low, high]"; an unbounded one (null upper bound in the JSON, `unbounded` set by
  // the page's Python) in the words of the terminal and `duet show`, not as a number and a dash.
  function interval(lo, hi, unbounded) {
    if (unbounded) return lo !== null && lo > 0 ? "[" + num(lo) + ", no upper bound]" : "[CI unbounded]";
    return "[" + num(lo) + ", " + num(hi) + "]";
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
    // The viewBox lets the stylesheet shrink a chart to a narrow window or a printed page, whole.
    var svg = el("svg", { width: width, height: height, viewBox: "0 0 " + width + " " + height, "class": "chart",
                          role: "img", "aria-label": title }, box);
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
    var widest = 0;
    y.ticks(n || 5).forEach(function (v) {
      var py = y(v);
      if (py < -0.5 || py > c.h + 0.5) return;
      el("line", { "class": "grid", x1: 0, x2: c.w, y1: py, y2: py }, g);
      el("line", { x1: -4, x2: 0, y1: py, y2: py }, g);
      widest = Math.max(widest, svgText(g, -7, py + 4, fmt(v), { "text-anchor": "end" }).getComputedTextLength());
    });
    // Left of the widest tick label ("10.8 ms" ran under "time per iteration"), within the margin if it fits.
    if (label) svgText(g, -c.h / 2, -Math.max(48, widest + 14), label, { "text-anchor": "middle", transform: "rotate(-90)" });
  }
  function legend(c, entries, dy) {
    var g = el("g", { transform: "translate(" + (c.w - 4) + "," + (dy || -14) + ")" }, c.g);
    var x = 0;
    entries.slice().reverse().forEach(function (e) {
      var t = svgText(g, x, 4, e[0], { "text-anchor": "end" });
      x -= e[0].length * 6.2 + 6;
      el("rect", { x: x - 4, y: -4, width: 9, height: 9, fill: e[1] }, g);
      x -= 24;
      return t;
    });
  }
  // The width of a chart that spans the page: `full` where the page is as wide, down to `least` in a narrow
  // window (below that the stylesheet scales the chart down), so that its labels stay legible on a phone.
  function spanWidth(parent, full, least) { return Math.max(least, Math.min(full, parent.clientWidth || full)); }
  function truncate(s, n) { return s.length > n ? s.slice(0, n - 1) + "…" : s; }

  // Line chart: series of [x, y, low, high] points, the band between low and high shaded.
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
    var ydom = opts.ydomain || pad.apply(null, extent(ys).concat([0.08]));
    var y = linear(ydom, [c.h, 0]);
    // A given domain may cut a band or whisker (an early, very wide CI): drawn to the edge, not beyond it.
    var yc = function (v) { return y(clamp(v, Math.min(ydom[0], ydom[1]), Math.max(ydom[0], ydom[1]))); };
    xAxis(c, x, opts.xlabel, opts.xfmt || num, 6);
    yAxis(c, y, opts.ylabel, opts.yfmt || num, 5);
    if (opts.yref !== undefined) el("line", { "class": "ref", x1: 0, x2: c.w, y1: y(opts.yref), y2: y(opts.yref) }, c.g);
    series.forEach(function (s) {
      var pts = s.points.filter(function (p) { return p[1] !== null; });
      var band = pts.filter(function (p) { return p[2] !== undefined && p[2] !== null && p[3] !== null; });
      if (band.length > 1) {
        var poly = band.map(function (p) { return x(p[0]) + "," + yc(p[3]); })
          .concat(band.slice().reverse().map(function (p) { return x(p[0]) + "," + yc(p[2]); }));
        el("polygon", { points: poly.join(" "), fill: s.color, "fill-opacity": 0.15, stroke: "none" }, c.g);
      }
      el("polyline", { points: pts.map(function (p) { return x(p[0]) + "," + y(p[1]); }).join(" "), fill: "none",
                       stroke: s.color, "stroke-width": 2 }, c.g);
      pts.forEach(function (p) {
        var g = el("g", {}, c.g);
        if (p[2] !== undefined && p[2] !== null && p[3] !== null) {
          el("line", { x1: x(p[0]), x2: x(p[0]), y1: yc(p[2]), y2: yc(p[3]), stroke: s.color, "stroke-opacity": 0.6 }, g);
        }
        el("circle", { cx: x(p[0]), cy: y(p[1]), r: 3.5, fill: s.color }, g);
        tip(g, s.tip(p));
      });
    });
    if (series.length > 1 || opts.legend) legend(c, series.map(function (s) { return [s.name, s.color]; }));
    return c;
  }

  // The range holding all but the extreme `share` of the values at each end: one stray value (a warm-up, a
  // hiccup) would otherwise flatten every other point onto one line. Points beyond it are drawn at the edge.
  function robustExtent(values, share) {
    var f = finite(values).sort(function (a, b) { return a - b; });
    if (!f.length) return [0, 1];
    var k = Math.floor(f.length * share);
    return [f[k], f[f.length - 1 - k]];
  }
  function clamp(v, lo, hi) { return Math.max(lo, Math.min(hi, v)); }

  // A's and B's distributions over shared bins: each a shaded step outline in its colour, so both stay
  // visible where they overlap, with a dashed line at each side's median.
  function distribution(parent, title, h, opts) {
    var c = chart(parent, title, opts.width || 420, opts.height || 260, { l: 52, r: 14, t: 24, b: 44 }, opts.note);
    var x = linear([h.edges[0], h.edges[h.edges.length - 1]], [0, c.w]);
    // opts.single: one command benchmarked on its own, so there is no B to draw.
    var sides = opts.single ? [["A", h.A]] : [["A", h.A], ["B", h.B]];
    var top = Math.max.apply(null, h.A.concat(opts.single ? [] : h.B).concat([1]));
    var y = linear([0, top * 1.1], [c.h, 0]);
    xAxis(c, x, opts.xlabel, seconds, 5);
    yAxis(c, y, opts.unit, num, 4);
    sides.forEach(function (side) {
      var d = "M" + x(h.edges[0]) + "," + y(0);
      side[1].forEach(function (count, i) { d += " L" + x(h.edges[i]) + "," + y(count) + " L" + x(h.edges[i + 1]) + "," + y(count); });
      d += " L" + x(h.edges[h.edges.length - 1]) + "," + y(0) + " Z";
      el("path", { d: d, fill: SIDE[side[0]], "fill-opacity": 0.22, stroke: SIDE[side[0]], "stroke-width": 1.5,
                   "class": "dist-" + side[0] }, c.g);
    });
    h.A.forEach(function (countA, i) {
      var r = el("rect", { x: x(h.edges[i]), width: Math.max(0.5, x(h.edges[i + 1]) - x(h.edges[i])), y: 0, height: c.h,
                           fill: "transparent" }, c.g);
      tip(r, seconds(h.edges[i]) + " … " + seconds(h.edges[i + 1]) + "\nA: " + countA + " " + opts.unit +
             (opts.single ? "" : "\nB: " + h.B[i] + " " + opts.unit));
    });
    (opts.single ? [["A", h.medianA]] : [["A", h.medianA], ["B", h.medianB]]).forEach(function (m) {
      if (m[1] === null || m[1] === undefined) return;
      var line = el("line", { x1: x(m[1]), x2: x(m[1]), y1: 0, y2: c.h, stroke: SIDE[m[0]], "stroke-width": 2,
                              "stroke-dasharray": "5 3" }, c.g);
      tip(line, m[0] + " median " + seconds(m[1]));
    });
    if (!opts.single) legend(c, [["A", SIDE.A], ["B", SIDE.B]]);
    return c;
  }

  // Where each run starts on a shared x axis when the runs are drawn one after another: `lengths` are the
  // runs' sizes; a small gap separates them.
  function runOffsets(lengths) {
    var total = lengths.reduce(function (a, b) { return a + b; }, 0);
    var gap = Math.max(1, Math.round(total / lengths.length * 0.08));
    var at = 0;
    var starts = lengths.map(function (n) { var s = at; at += n + gap; return s; });
    return { starts: starts, end: Math.max(1, at - gap) };
  }
  // Alternate shading and run numbers behind plots whose x axis is the runs one after another.
  function runBands(c, x, runs, starts, lengths) {
    // Labels far enough apart not to overlap: "run 9999" takes about 6 px a character.
    var label = Math.max.apply(null, runs.map(function (r) { return ("run " + r).length; })) * 6 + 8;
    var every = Math.max(1, Math.ceil(runs.length * label / c.w));
    runs.forEach(function (run, i) {
      var x0 = x(starts[i] - 0.5), x1 = x(starts[i] + lengths[i] - 0.5);
      if (i % 2) el("rect", { x: x0, y: 0, width: Math.max(1, x1 - x0), height: c.h, fill: "#f3f3f3" }, c.g);
      if (i % every === 0) svgText(c.g, (x0 + x1) / 2, -4, "run " + run, { "text-anchor": "middle", "class": "run-label" });
    });
  }

  // The tooltip: the text `tip` attached to the node under the pointer (or an ancestor).
  function tooltips() {
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
  }

  return { SVG_NS: SVG_NS, METHOD_COLORS: METHOD_COLORS, RUN_COLORS: RUN_COLORS, SIDE: SIDE, el: el,
    html: html, svgText: svgText, tip: tip, num: num, interval: interval, seconds: seconds, pct: pct, finite: finite,
    extent: extent, pad: pad, ticks: ticks, linear: linear, logScale: logScale, chart: chart, xAxis: xAxis,
    yAxis: yAxis, legend: legend, truncate: truncate, spanWidth: spanWidth, lines: lines, tooltips: tooltips, robustExtent: robustExtent,
    clamp: clamp, distribution: distribution, runOffsets: runOffsets, runBands: runBands };
})();
