// The worker console: plain JS, no dependencies (charts.js draws the charts). Reads the worker's
// JSON endpoints with the bearer token (asked when the worker answers 401, kept in this tab's
// session storage) and redraws; the charts' history comes from the workers (the last 15 minutes
// on the first call, then only the newer samples).
(function () {
  "use strict";
  var KEY = "streams-runtime-token";
  var REFRESH_MS = 2000;
  var byInstance = {};  // endpoint -> {samples: [...], error}: the charts' history
  var spanMs = 900000;  // the workers' span (span_s of their answers)
  var MIN_AXIS_MS = 60000;
  var wholeNext = false;  // ask for the whole history next time (an instance appeared)
  var topologyShown = false;

  function $(id) { return document.getElementById(id); }
  function token() { return sessionStorage.getItem(KEY) || ""; }
  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    (children || []).forEach(function (c) {
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }
  function api(path) {
    var headers = token() ? { Authorization: "Bearer " + token() } : {};
    return fetch(path, { headers: headers }).then(function (r) {
      if (r.status === 401) { askToken(); throw new Error("401: the worker needs its bearer token"); }
      return r;
    });
  }
  function askToken() { $("token-form").hidden = false; $("status").textContent = "token needed"; }

  function showTopology() {
    if (topologyShown) return;
    api("/ui/api/topology/panels").then(function (r) { return r.json().then(function (b) { return [r, b]; }); })
      .then(function (rb) {
        if (!rb[0].ok) { $("topology").textContent = "no picture: " + (rb[1].message || rb[0].status); return; }
        $("topology").replaceChildren.apply($("topology"), rb[1].panels.map(function (p, i) {
          var panel = el("div", { "class": "panel", "data-panel": String(i) }, [el("h3", {}, [p.label])]);
          panel.insertAdjacentHTML("beforeend", p.svg);
          panel.addEventListener("click", function () { zoom(panel); });
          return panel;
        }));
        topologyShown = true;
      }).catch(function () {});
  }

  // a click shows a panel at twice its size (scrolled inside it), another click as before
  function zoom(panel) {
    var svg = panel.querySelector("svg");
    if (!svg) return;
    if (panel.classList.toggle("full")) {
      svg.style.width = 2 * svg.viewBox.baseVal.width * 4 / 3 + "px";  // Graphviz draws in pt
    } else {
      svg.style.width = "";
    }
  }

  function cells(values) {
    return values.map(function (c) {
      return typeof c === "number" ? el("td", { "class": "num" }, [String(c)]) : el("td", {}, [c === null ? "-" : c]);
    });
  }
  function table(headers, rows) {
    var t = el("table", {}, [el("tr", {}, headers.map(function (h) { return el("th", {}, [h]); }))]);
    rows.forEach(function (r) { t.appendChild(el("tr", {}, r)); });
    return t;
  }

  function showInstances(body) {
    $("app-id").textContent = body.application_id;
    var box = $("instances");
    box.replaceChildren();
    var lagRows = [], sizes = {}, endpoints = [];
    body.instances.forEach(function (inst) {
      endpoints.push(inst.endpoint);
      var div = el("div", { "class": "instance" + (inst.error ? " unreachable" : ""), "data-endpoint": inst.endpoint }, [
        el("h3", {}, [inst.endpoint + (inst.self ? " (this instance)" : "") + " " + (inst.state || "")]),
      ]);
      if (inst.error) div.appendChild(el("div", { "class": "error" }, [inst.error]));
      inst.threads.forEach(function (th) {
        var line = el("div", { "class": "thread" }, [th.name + " " + th.state + ": "]);
        th.tasks.forEach(function (t) {
          var note = t.kind === "active" ? (t.state === "RESTORING" ? " (restoring)" : "") : " (" + t.kind + ")";
          line.appendChild(el("span", {
            "class": "task " + t.kind + (t.state === "RESTORING" ? " restoring" : ""),
            "data-task": t.task_id, "data-host": inst.endpoint, "data-state": t.state || "",
            title: t.kind + " " + (t.state || "") + " " + t.partitions.join(", "),
          }, [t.task_id + note]));
        });
        div.appendChild(line);
      });
      box.appendChild(div);
      Object.keys(inst.lags || {}).forEach(function (store) {
        Object.keys(inst.lags[store]).forEach(function (p) {
          var l = inst.lags[store][p];
          lagRows.push([inst.endpoint, store, p, l.current, l.end]);
        });
      });
      Object.keys(inst.stores || {}).forEach(function (store) {
        (sizes[store] = sizes[store] || {})[inst.endpoint] = inst.stores[store];
      });
    });
    $("lags").replaceChildren(table(["instance", "store", "partition", "position", "end", "lag", "restored"],
      lagRows.map(function (r) {
        var pct = r[4] > 0 ? Math.min(100, Math.round(100 * r[3] / r[4])) : 100;
        var bar = el("span", { "class": "bar" }, [el("span", { style: "width:" + pct + "%" })]);
        return cells([r[0], r[1], r[2], r[3], r[4], r[4] - r[3]]).concat([el("td", {}, [bar, " " + pct + "%"])]);
      })));
    $("stores").replaceChildren(table(["store"].concat(endpoints).concat(["all instances"]),
      Object.keys(sizes).sort().map(function (store) {
        var total = 0;
        var row = endpoints.map(function (e) {
          var n = sizes[store][e];
          total += n || 0;
          return n === undefined ? null : n;
        });
        return cells([store].concat(row).concat([total]));
      })));
  }

  // ------------------------------------------------------------------ history charts
  function mergeHistory(body, asked) {
    body.instances.forEach(function (inst) {
      if (asked && !byInstance[inst.endpoint]) wholeNext = true;  // a new instance: all its history
      var h = byInstance[inst.endpoint] = byInstance[inst.endpoint] || { samples: [] };
      h.error = inst.error || null;
      if (inst.span_s) spanMs = inst.span_s * 1000;
      var last = h.samples.length ? h.samples[h.samples.length - 1].t : -1;
      inst.samples.forEach(function (s) { if (s.t > last) { h.samples.push(s); last = s.t; } });
    });
    var oldest = Date.now() - spanMs, listed = body.instances.map(function (i) { return i.endpoint; });
    Object.keys(byInstance).forEach(function (e) {
      if (listed.indexOf(e) < 0) { delete byInstance[e]; return; }  // no longer in the group
      byInstance[e].samples = byInstance[e].samples.filter(function (s) { return s.t >= oldest; });
    });
  }
  function since() {
    if (wholeNext) { wholeNext = false; return ""; }
    var lasts = Object.keys(byInstance).map(function (e) {
      var s = byInstance[e].samples;
      return s.length && !byInstance[e].error ? s[s.length - 1].t : null;
    });
    if (!lasts.length || lasts.indexOf(null) >= 0) return "";
    return "?since=" + Math.min.apply(null, lasts);
  }
  function perInstance(field, label) {
    return Object.keys(byInstance).sort().map(function (e) {
      return { name: e + (label ? " " + label : ""), points: byInstance[e].samples.map(function (s) { return [s.t, s[field]]; }) };
    });
  }
  // [committed, position, end] -> end - committed (the position before a first commit; null
  // while the consumer has read nothing of the partition)
  function lagOf(o) {
    var base = o[0] !== null ? o[0] : o[1];
    return base === null ? null : Math.max(0, o[2] - base);
  }
  function lagSeries() {
    var byPartition = {};
    Object.keys(byInstance).forEach(function (e) {
      byInstance[e].samples.forEach(function (s) {
        Object.keys(s.offsets || {}).forEach(function (tp) {
          (byPartition[tp] = byPartition[tp] || []).push([s.t, lagOf(s.offsets[tp])]);
        });
      });
    });
    return Object.keys(byPartition).sort().map(function (tp) {
      return { name: tp, points: byPartition[tp].sort(function (a, b) { return a[0] - b[0]; }) };
    });
  }
  // the time axis: from the oldest sample kept (at least the last minute) to now, 15 minutes at most
  function chart(id, series, unit) {
    var box = $(id), now = Date.now(), oldest = now - MIN_AXIS_MS;
    Object.keys(byInstance).forEach(function (e) {
      var s = byInstance[e].samples;
      if (s.length) oldest = Math.min(oldest, s[0].t);
    });
    var t0 = Math.max(now - spanMs, oldest);
    ConsoleCharts.legend(box.querySelector(".legend"),
      ConsoleCharts.draw(box.querySelector("svg"), series, { t0: t0, t1: now, unit: unit }));
  }
  function showConsumerLag() {
    var rows = [];
    Object.keys(byInstance).sort().forEach(function (e) {
      var s = byInstance[e].samples, last = s[s.length - 1];
      if (!last || byInstance[e].error) return;
      Object.keys(last.offsets || {}).sort().forEach(function (tp) {
        var o = last.offsets[tp], cut = tp.lastIndexOf("/");
        rows.push(cells([tp.slice(0, cut), Number(tp.slice(cut + 1)), e, o[0], o[1], o[2], lagOf(o)]));
      });
    });
    $("consumer-lag").replaceChildren(table(["topic", "partition", "instance", "committed", "position",
      "end", "lag"], rows));
  }
  function showHistory(body, asked) {
    mergeHistory(body, asked);
    var unreachable = Object.keys(byInstance).filter(function (e) { return byInstance[e].error; });
    $("history-note").textContent = unreachable.length ? "(not answering: " + unreachable.map(function (e) {
      return e + ": " + byInstance[e].error;
    }).join("; ") + ")" : "";
    chart("chart-rate", perInstance("process_rate"), "records/s");
    chart("chart-commit", perInstance("commit_latency_ms"), "ms");
    chart("chart-lag", lagSeries(), "records");
    chart("chart-restore", perInstance("restore_remaining"), "records");
    chart("chart-dropped", perInstance("dropped", "dropped").concat(perInstance("dead_lettered", "dead-lettered")),
      "records");
    showConsumerLag();
  }

  function showStores(body) {
    var select = $("lookup-store"), current = select.value;
    var names = body.stores.map(function (s) { return s.name; });
    if (names.join() === Array.prototype.map.call(select.options, function (o) { return o.value; }).join()) return;
    select.replaceChildren.apply(select, names.map(function (n) { return el("option", { value: n }, [n]); }));
    if (names.indexOf(current) >= 0) select.value = current;
  }

  function historyCall(query) {
    return api("/ui/api/history/all" + query).then(function (r) { return r.json(); })
      .then(function (body) { showHistory(body, query !== ""); });
  }

  function refresh() {
    showTopology();
    return Promise.all([
      api("/ui/api/instances").then(function (r) { return r.json(); }).then(showInstances),
      api("/stores").then(function (r) { return r.json(); }).then(showStores),
      historyCall(since()),
    ]).then(function () { $("status").textContent = "updated " + new Date().toLocaleTimeString(); })
      .catch(function (e) { $("status").textContent = String(e.message || e); });
  }

  $("token-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    sessionStorage.setItem(KEY, $("token-input").value.trim());
    $("token-input").value = "";
    $("token-form").hidden = true;
    refresh();
  });
  $("lookup-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var store = $("lookup-store").value, key = $("lookup-key").value;
    var path = "/stores/" + encodeURIComponent(store) + "/keys/" + encodeURIComponent(key);
    api(path).then(function (r) { return r.json().then(function (b) { return [r.status, b]; }); })
      .then(function (sb) {
        var b = sb[1];
        $("lookup-result").textContent = sb[0] === 200
          ? "value: " + JSON.stringify(b.value) + "\nanswered by: " + b.host + " (partition " + b.partition + ")"
          : sb[0] + " " + (b.error || "") + ": " + (b.message || JSON.stringify(b));
      }).catch(function (e) { $("lookup-result").textContent = String(e.message || e); });
  });
  // the next refresh REFRESH_MS after the last one ended (a slow instance never piles calls up)
  (function loop() { refresh().then(function () { setTimeout(loop, REFRESH_MS); }); })();
})();
