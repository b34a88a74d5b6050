// Line charts for the worker console: plain SVG, no dependencies. ConsoleCharts.draw(svg, series,
// opts) draws a time axis (opts.t0..opts.t1, ms since the epoch; ticks at round minutes or
// seconds, at most 6 or so), a value axis from 0 with its
// unit (opts.unit) and one line per series ({name, points: [[t, value or null], ...]}; a null
// breaks the line). The svg gets data-first-t (the oldest time drawn) and data-points.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
    "#17becf", "#7f7f7f", "#bcbd22"];
  var M = { left: 58, right: 16, top: 22, bottom: 26 };

  function node(tag, attrs, text) {
    var n = document.createElementNS(NS, tag);
    Object.keys(attrs).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    if (text !== undefined) n.textContent = text;
    return n;
  }
  function niceMax(v) {
    if (!(v > 0)) return 1;
    var p = Math.pow(10, Math.floor(Math.log10(v))), f = v / p;
    return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * p;
  }
  function number(v) {
    if (v >= 1e6) return (v / 1e6).toFixed(v % 1e6 ? 1 : 0) + "M";
    if (v >= 1e3) return (v / 1e3).toFixed(v % 1e3 ? 1 : 0) + "k";
    return String(Math.round(v * 100) / 100);
  }
  function two(n) { return ("0" + n).slice(-2); }
  function clock(t, seconds) {
    var d = new Date(t);
    return two(d.getHours()) + ":" + two(d.getMinutes()) + (seconds ? ":" + two(d.getSeconds()) : "");
  }
  var STEPS_S = [5, 10, 15, 30, 60, 120, 180, 300, 600];
  function timeStep(rangeMs) {
    for (var i = 0; i < STEPS_S.length; i++) if (rangeMs / (STEPS_S[i] * 1000) <= 6) return STEPS_S[i] * 1000;
    return STEPS_S[STEPS_S.length - 1] * 1000;
  }

  function draw(svg, series, opts) {
    var w = svg.clientWidth || parseInt(svg.getAttribute("width"), 10) || 600;
    var h = svg.clientHeight || parseInt(svg.getAttribute("height"), 10) || 180;
    var pw = w - M.left - M.right, ph = h - M.top - M.bottom;
    var t0 = opts.t0, t1 = Math.max(opts.t1, opts.t0 + 1);
    var max = 0, first = null, count = 0;
    series.forEach(function (s) {
      s.points.forEach(function (p) {
        if (p[1] === null || p[0] < t0) return;
        max = Math.max(max, p[1]); count += 1;
        if (first === null || p[0] < first) first = p[0];
      });
    });
    max = niceMax(max);
    function x(t) { return M.left + pw * (t - t0) / (t1 - t0); }
    function y(v) { return M.top + ph * (1 - v / max); }
    svg.replaceChildren();
    var xAxis = node("g", { "class": "x-axis" }), yAxis = node("g", { "class": "y-axis" });
    xAxis.appendChild(node("line", { x1: M.left, x2: M.left + pw, y1: M.top + ph, y2: M.top + ph }));
    yAxis.appendChild(node("line", { x1: M.left, x2: M.left, y1: M.top, y2: M.top + ph }));
    var step = timeStep(t1 - t0);
    for (var t = Math.ceil(t0 / step) * step; t <= t1; t += step) {
      xAxis.appendChild(node("line", { "class": "tick", x1: x(t), x2: x(t), y1: M.top + ph, y2: M.top + ph + 4 }));
      xAxis.appendChild(node("text", { x: x(t), y: h - 8, "text-anchor": "middle" }, clock(t, step < 60000)));
    }
    for (var i = 0; i <= 4; i++) {
      var v = max * i / 4;
      yAxis.appendChild(node("line", { "class": "grid", x1: M.left, x2: M.left + pw, y1: y(v), y2: y(v) }));
      yAxis.appendChild(node("text", { x: M.left - 5, y: y(v) + 4, "text-anchor": "end" }, number(v)));
    }
    yAxis.appendChild(node("text", { "class": "unit", x: 4, y: 12 }, opts.unit));
    svg.appendChild(yAxis);
    svg.appendChild(xAxis);
    series.forEach(function (s, k) {
      var color = COLORS[k % COLORS.length], run = [];
      function flush() {
        if (run.length) {
          svg.appendChild(node("polyline", { "class": "series", "data-series": s.name, fill: "none",
            stroke: color, "stroke-width": 1.8, points: run.join(" ") }));
        }
        if (run.length === 1) {  // a lone sample: a dot, or it would not show
          var xy = run[0].split(",");
          svg.appendChild(node("circle", { "class": "dot", cx: xy[0], cy: xy[1], r: 2.5, fill: color }));
        }
        run = [];
      }
      s.points.forEach(function (p) {
        if (p[0] < t0) return;
        if (p[1] === null) { flush(); return; }
        run.push(x(p[0]).toFixed(1) + "," + y(p[1]).toFixed(1));
      });
      flush();
      s.color = color;
    });
    if (!count) svg.appendChild(node("text", { x: M.left + 8, y: M.top + 16, "class": "empty" }, "no data yet"));
    svg.setAttribute("data-first-t", first === null ? "" : String(first));
    svg.setAttribute("data-points", String(count));
    return series;
  }

  function legend(box, series) {
    box.replaceChildren();
    series.forEach(function (s) {
      var item = document.createElement("span");
      item.className = "legend-item";
      item.setAttribute("data-series", s.name);
      var swatch = document.createElement("i");
      swatch.style.background = s.color;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(s.name));
      box.appendChild(item);
    });
  }

  window.ConsoleCharts = { draw: draw, legend: legend };
})();
