// The worker console: plain JS, no dependencies. Reads the worker's JSON endpoints with the bearer
// token (asked when the worker answers 401, kept in this tab's session storage) and redraws.
(function () {
  "use strict";
  var KEY = "streams-runtime-token";
  var REFRESH_MS = 2000;
  var RATE_WINDOW_S = 300;
  var samples = [];  // [seconds, process total]
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
    api("/ui/api/topology.svg").then(function (r) { return r.text().then(function (t) { return [r, t]; }); })
      .then(function (rt) {
        if (!rt[0].ok) { $("topology").textContent = "no picture: " + rt[1]; return; }
        $("topology").innerHTML = rt[1];
        topologyShown = true;
      }).catch(function () {});
  }

  function showInstances(body) {
    $("app-id").textContent = body.application_id;
    var box = $("instances");
    box.replaceChildren();
    var lagRows = [];
    body.instances.forEach(function (inst) {
      var div = el("div", { "class": "instance", "data-endpoint": inst.endpoint }, [
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
    });
    var table = el("table", {}, [el("tr", {}, ["instance", "store", "partition", "position", "end",
      "lag", "restored"].map(function (h) { return el("th", {}, [h]); }))]);
    lagRows.forEach(function (r) {
      var pct = r[4] > 0 ? Math.min(100, Math.round(100 * r[3] / r[4])) : 100;
      var bar = el("span", { "class": "bar" }, [el("span", { style: "width:" + pct + "%" })]);
      table.appendChild(el("tr", {}, [r[0], r[1], r[2], String(r[3]), String(r[4]), String(r[4] - r[3])]
        .map(function (c) { return el("td", {}, [c]); }).concat([el("td", {}, [bar, " " + pct + "%"])])));
    });
    $("lags").replaceChildren(table);
  }

  function metricSum(text, name) {
    var total = 0, found = false;
    text.split("\n").forEach(function (line) {
      if (line.indexOf(name) === 0 && (line[name.length] === "{" || line[name.length] === " ")) {
        total += parseFloat(line.slice(line.lastIndexOf(" ") + 1)); found = true;
      }
    });
    return found ? total : null;
  }
  function storeSizes(text) {
    var sizes = {};
    text.split("\n").forEach(function (line) {
      if (line.indexOf("kafka_streams_state_store_entries{") !== 0) return;
      var m = /store="([^"]*)"/.exec(line);
      if (m) sizes[m[1]] = (sizes[m[1]] || 0) + parseFloat(line.slice(line.lastIndexOf(" ") + 1));
    });
    return sizes;
  }
  function showMetrics(text) {
    var now = Date.now() / 1000;
    var total = metricSum(text, "kafka_streams_stream_thread_process_total");
    if (total !== null) samples.push([now, total]);
    samples = samples.filter(function (s) { return now - s[0] <= RATE_WINDOW_S; });
    var rates = [];
    for (var i = 1; i < samples.length; i++) {
      var dt = samples[i][0] - samples[i - 1][0];
      rates.push([samples[i][0], dt > 0 ? Math.max(0, (samples[i][1] - samples[i - 1][1]) / dt) : 0]);
    }
    var svg = $("rate-chart"), w = 420, h = 120;
    var max = Math.max.apply(null, [1].concat(rates.map(function (r) { return r[1]; })));
    var points = rates.map(function (r) {
      return ((w * (1 - (now - r[0]) / RATE_WINDOW_S)).toFixed(1) + "," + (h - 4 - (h - 8) * r[1] / max).toFixed(1));
    }).join(" ");
    svg.innerHTML = '<polyline fill="none" stroke="#2a7" stroke-width="2" points="' + points + '"/>' +
      '<text x="4" y="12" font-size="10">max ' + max.toFixed(1) + "/s</text>";
    $("rate-now").textContent = rates.length ? "now " + rates[rates.length - 1][1].toFixed(1) + " records/s" : "";
    var sizes = storeSizes(text);
    var table = el("table", {}, [el("tr", {}, [el("th", {}, ["store"]), el("th", {}, ["entries"])])]);
    Object.keys(sizes).sort().forEach(function (s) {
      table.appendChild(el("tr", {}, [el("td", {}, [s]), el("td", {}, [String(sizes[s])])]));
    });
    $("stores").replaceChildren(table);
  }

  function showStores(body) {
    var select = $("lookup-store"), current = select.value;
    var names = body.stores.map(function (s) { return s.name; });
    if (names.join() === Array.prototype.map.call(select.options, function (o) { return o.value; }).join()) return;
    select.replaceChildren.apply(select, names.map(function (n) { return el("option", { value: n }, [n]); }));
    if (names.indexOf(current) >= 0) select.value = current;
  }

  function refresh() {
    showTopology();
    Promise.all([
      api("/ui/api/instances").then(function (r) { return r.json(); }).then(showInstances),
      api("/stores").then(function (r) { return r.json(); }).then(showStores),
      api("/metrics").then(function (r) { return r.text(); }).then(showMetrics),
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
  refresh();
  setInterval(refresh, REFRESH_MS);
})();
