(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("tb-data").textContent);
  var Q = D.questions, S = D.strings, PAGE = 50;
  var state = { cfg: D.configs[0], cx: "", op: "", stage: "", hop: "", text: "", page: 0, sel: -1 };
  var matches = [];
  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function chip(stageIndex) {
    var name = D.stages[stageIndex];
    var c = el("span", name, "chip st-" + name);
    c.title = D.stageHelp[stageIndex];
    return c;
  }
  function option(select, value, label) {
    var o = el("option", label); o.value = value; select.appendChild(o);
  }
  function distinct(key) {
    var seen = new Set();
    Q.forEach(function (q) { if (q[key] !== null && q[key] !== undefined) seen.add(String(q[key])); });
    return Array.from(seen).sort();
  }
  // tabs
  function showTab(which) {
    ["report", "browser"].forEach(function (t) {
      $("page-" + t).hidden = t !== which;
      $("tab-" + t).classList.toggle("active", t === which);
    });
  }
  $("tab-report").addEventListener("click", function () { showTab("report"); share(); });
  $("tab-browser").addEventListener("click", function () { showTab("browser"); share(); });
  // filters
  D.configs.forEach(function (c) { option($("f-config"), c, c); });
  option($("f-cx"), "", "all"); distinct("cx").forEach(function (v) { option($("f-cx"), v, v); });
  option($("f-op"), "", "all"); distinct("op").forEach(function (v) { option($("f-op"), v, v); });
  option($("f-stage"), "", "any"); D.stages.forEach(function (s, i) { option($("f-stage"), String(i), s); });
  var maxHops = 0; Q.forEach(function (q) { maxHops = Math.max(maxHops, q.hops.length); });
  option($("f-hop"), "", "any hop");
  for (var h = 1; h <= maxHops; h++) option($("f-hop"), String(h), "hop " + h);
  var hay = Q.map(function (q) {
    return [q.id, q.q, q.a, q.hops.join(" ")].join("\n").toLowerCase();
  });
  function keep(i) {
    var q = Q[i], r = (D.runs[state.cfg] || [])[i];
    if (!r) return false;
    if (state.cx && q.cx !== state.cx) return false;
    if (state.op && q.op !== state.op) return false;
    if (state.hop && r.st.length < +state.hop) return false;
    if (state.stage !== "") {
      var s = +state.stage;
      if (state.hop) { if (r.st[+state.hop - 1] !== s) return false; }
      else if (r.st.indexOf(s) < 0) return false;
    }
    if (state.text && hay[i].indexOf(state.text) < 0) return false;
    return true;
  }
  function filter() {
    matches = [];
    for (var i = 0; i < Q.length; i++) if (keep(i)) matches.push(i);
    state.page = 0;
    render();
    share();
  }
  // The address names the view (#browser&cfg=..&stage=capped&q=..), so it can be shared; the
  // browser's history is not filled with every keystroke (replaceState, not pushState).
  var HASH_KEYS = ["cfg", "cx", "op", "stage", "hop", "text", "q"];
  var applying = false;
  function viewHash() {
    if ($("page-browser").hidden) return "";
    var parts = ["browser"], values = {
      cfg: state.cfg, cx: state.cx, op: state.op, stage: state.stage === "" ? "" : D.stages[+state.stage],
      hop: state.hop, text: $("f-text").value.trim(), q: state.sel >= 0 ? Q[state.sel].id : ""
    };
    HASH_KEYS.forEach(function (k) {
      if (values[k] !== "" && values[k] !== null && values[k] !== undefined) parts.push(k + "=" + encodeURIComponent(values[k]));
    });
    return "#" + parts.join("&");
  }
  function share() {
    if (applying || !window.history || !history.replaceState) return;
    var hash = viewHash();
    // on the report tab the address is left alone unless it names a browser view (a heading's anchor stays)
    if (hash === location.hash || (hash === "" && location.hash.indexOf("#browser") !== 0)) return;
    try { history.replaceState(null, "", hash || location.pathname + location.search); } catch (e) { /* an address the page may not set */ }
  }
  function readHash(hash) {
    var parts = hash.replace(/^#/, "").split("&"), out = { tab: parts[0] };
    parts.slice(1).forEach(function (p) {
      var at = p.indexOf("=");
      if (at < 0) return;
      try { out[p.slice(0, at)] = decodeURIComponent(p.slice(at + 1).replace(/\+/g, " ")); } catch (e) { /* a malformed escape: ignored */ }
    });
    return out;
  }
  function choose(id, value) {
    // only a value the select offers: an unknown one leaves the filter as it is
    var sel = $(id);
    for (var j = 0; j < sel.options.length; j++) if (sel.options[j].value === value) { sel.value = value; return true; }
    return false;
  }
  function applyHash() {
    var h = readHash(location.hash);
    if (h.tab === "report") showTab("report");
    if (h.tab !== "browser") return;
    showTab("browser");
    applying = true;
    if (h.cfg !== undefined && choose("f-config", h.cfg)) state.cfg = h.cfg;
    if (h.cx !== undefined && choose("f-cx", h.cx)) state.cx = h.cx;
    if (h.op !== undefined && choose("f-op", h.op)) state.op = h.op;
    if (h.stage !== undefined) {
      var s = D.stages.indexOf(h.stage);
      if (choose("f-stage", s < 0 ? h.stage : String(s))) state.stage = $("f-stage").value;
    }
    if (h.hop !== undefined && choose("f-hop", h.hop)) state.hop = h.hop;
    if (h.text !== undefined) { $("f-text").value = h.text; state.text = h.text.trim().toLowerCase(); }
    filter();
    var at = -1;
    if (h.q !== undefined) for (var i = 0; i < Q.length; i++) if (String(Q[i].id) === h.q) { at = i; break; }
    if (at >= 0 && D.runs[state.cfg][at]) {
      var pos = matches.indexOf(at);
      if (pos >= 0) state.page = Math.floor(pos / PAGE);
      select(at);
      var row = document.querySelector('#rows tr[data-index="' + at + '"]');
      if (row && row.scrollIntoView) row.scrollIntoView({ block: "nearest" });
    }
    applying = false;
    share();
  }
  function render() {
    var pages = Math.max(1, Math.ceil(matches.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    $("count").textContent = matches.length + " of " + Q.length + " questions";
    $("page").textContent = "page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0; $("next").disabled = state.page >= pages - 1;
    var body = $("rows"); body.textContent = "";
    var frag = document.createDocumentFragment();
    matches.slice(state.page * PAGE, (state.page + 1) * PAGE).forEach(function (i) {
      var q = Q[i], r = D.runs[state.cfg][i];
      var tr = el("tr"); tr.dataset.index = i; tr.dataset.qid = q.id;
      if (i === state.sel) tr.className = "selected";
      tr.appendChild(el("td", q.id)); tr.appendChild(el("td", q.cx)); tr.appendChild(el("td", q.op));
      var tq = el("td", q.q, "q"); tq.title = q.q; tr.appendChild(tq);
      var ts = el("td"); r.st.forEach(function (s) { ts.appendChild(chip(s)); }); tr.appendChild(ts);
      tr.addEventListener("click", function () { select(i); });
      frag.appendChild(tr);
    });
    body.appendChild(frag);
  }
  function table(head, rows, aligns) {
    var t = el("table"), th = el("thead"), tr = el("tr");
    head.forEach(function (h, j) { tr.appendChild(el("th", h, aligns && aligns[j])); });
    th.appendChild(tr); t.appendChild(th);
    var tb = el("tbody");
    rows.forEach(function (row) {
      var r = el("tr");
      row.forEach(function (c, j) {
        var td = el("td", null, aligns && aligns[j]);
        if (c instanceof Node) td.appendChild(c); else td.textContent = c === null || c === undefined ? "-" : String(c);
        r.appendChild(td);
      });
      tb.appendChild(r);
    });
    t.appendChild(tb);
    var wrap = el("div", null, "scroll"); wrap.appendChild(t); return wrap;
  }
  function fmtScore(s) { return s === null || s === undefined ? "-" : s.toFixed(4); }
  function markCell(code) {
    var name = D.marks[code & 3], hop = code >> 3;
    return name ? el("span", name + (hop ? " " + hop : ""), "mark-" + name) : "";
  }
  function str(j) { return j === null || j === undefined ? null : S[j]; }
  function select(i) {
    state.sel = i; render(); share();
    var q = Q[i], r = D.runs[state.cfg][i], box = $("detail");
    box.textContent = "";
    box.dataset.qid = q.id;
    box.appendChild(el("h2", "question " + q.id + " (" + q.split + "), " + state.cfg));
    var dl = el("dl");
    var set = D.settings[state.cfg];
    [["question", q.q], ["t_query", q.tq], ["answer", q.a], ["operator", q.op], ["complexity", q.cx], ["k", set.k]]
      .forEach(function (p) { dl.appendChild(el("dt", p[0])); dl.appendChild(el("dd", p[1])); });
    box.appendChild(dl);
    box.appendChild(el("h3", "gold chain, each hop's stage (SPEC \u00a77)"));
    box.appendChild(table(["hop", "s | r | o | t", "stage"], q.hops.map(function (h, j) { return [j + 1, h, chip(r.st[j])]; })));
    var others = D.configs.filter(function (c) { return D.runs[c][i]; }).map(function (c) {
      var span = el("span"); D.runs[c][i].st.forEach(function (s) { span.appendChild(chip(s)); }); return [c, span];
    });
    box.appendChild(el("h3", "stages in every configuration"));
    box.appendChild(table(["config", "stages per hop"], others));
    if (q.neg.length) {
      box.appendChild(el("h3", "negatives: replaced hop \u2192 replacement"));
      box.appendChild(table(["list", "replaced hop", "replacement"], q.neg));
    }
    var a = r.a;
    box.appendChild(el("h3", "anchor (SPEC \u00a72.3)"));
    box.appendChild(table(["field", "value"], [
      ["rule", set.rule],
      ["anchor", a[1] === null ? "none" : str(a[2]) + " (" + str(a[1]) + "), source " + a[0] + (a[6] ? "" : ", not a KG entity")],
      ["gold subject", str(a[4]) + " (" + str(a[3]) + ")"],
      ["anchor is gold", a[5] === null ? "- (no gold subject)" : (a[5] ? "yes" : "NO")]]));
    box.appendChild(el("h3", "pool (SPEC \u00a72.4): " + r.pr[0] + " rows, " + r.pr[1] + " candidates"));
    box.appendChild(table(["hop", "cap", "eligible rows", "taken", "cap hit"],
      r.p.map(function (p, j) { return [j + 1, p[0], p[1], p[2], p[3] ? "yes" : "no"]; }), ["", "right", "right", "right", ""]));
    var evRows = function (items, start) {
      return items.map(function (e, j) { return [start + j, markCell(e[2]), fmtScore(e[1]), (e[2] >> 2) & 1 ? "*" : "", S[e[0]]]; });
    };
    box.appendChild(el("h3", "evidence, ranked (k = " + set.k + ")"));
    box.appendChild(table(["#", "mark", "score", "tie", "line"], evRows(r.ev, 1), ["right", "", "right", "", ""]));
    if (r.ti.length) {
      box.appendChild(el("h3", "cut-off ties (same score as the k-th, below it)"));
      box.appendChild(table(["#", "mark", "score", "tie", "line"], evRows(r.ti, r.ev.length + 1), ["right", "", "right", "", ""]));
      box.appendChild(el("p", "tie * = the tie group at the cut-off: equal scores straddling rank k (SPEC \u00a73.5)", "muted"));
    }
    box.appendChild(el("p", "marks: gold = gold hop valid at t_query; stale = gold hop at an invalid time; dist = S_dist replacement (the number is the hop)", "muted"));
  }
  var timer = null;
  $("f-text").addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.text = $("f-text").value.trim().toLowerCase(); filter(); }, 150);
  });
  [["f-config", "cfg"], ["f-cx", "cx"], ["f-op", "op"], ["f-stage", "stage"], ["f-hop", "hop"]].forEach(function (p) {
    $(p[0]).addEventListener("change", function () {
      state[p[1]] = $(p[0]).value; filter();
      if (p[1] === "cfg" && state.sel >= 0 && D.runs[state.cfg][state.sel]) select(state.sel);
    });
  });
  $("prev").addEventListener("click", function () { state.page -= 1; render(); });
  $("next").addEventListener("click", function () { state.page += 1; render(); });
  var legend = $("legend");
  D.stages.forEach(function (s, j) { legend.appendChild(chip(j)); legend.appendChild(document.createTextNode(D.stageHelp[j] + "  ")); });
  if (D.configs.length) {
    applying = true; filter(); applying = false;  // the address is read before it is written
    applyHash();
    window.addEventListener("hashchange", applyHash);  // a link or an edited address opens its view
  } else $("count").textContent = "no runs";
})();
